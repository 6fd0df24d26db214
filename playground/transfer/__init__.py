"""Sessions into and out of databases and files: export, the export format's model, import, merge."""
