"""The decision strip under the conversation and the evaluation pop-up."""
