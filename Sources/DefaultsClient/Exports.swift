import DefaultsCore

/// The property-list value model, shared with the daemon (see DefaultsCore).
public typealias PlistValue = DefaultsCore.PlistValue
/// An error code and message of the protocol (docs/PROTOCOL.md), shared with the daemon.
public typealias DefaultsError = DefaultsCore.DefaultsError
