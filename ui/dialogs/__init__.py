"""The main window's dialogs, one module each: new session, engine settings, participant
settings, joining, the persona editor; ``common`` holds what they share."""
