"""The CLI's feature commands, one module each (`register(app)`), sharing `options` (the common options and `emit`)."""
