"""The main window's parts: what its helpers may use of it (:mod:`ui.window.host`) and the parts
:class:`ui.window.main_window.MainWindow` is assembled from."""
