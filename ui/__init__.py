"""The Qt desktop window (PySide6 on a qasync loop): it imports playground, never the reverse."""
