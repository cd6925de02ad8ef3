// The module's contents are compiled with the package trait `Configuration` only (see the
// README's "Configuration provider"): without it, swift-configuration is neither fetched nor built.
