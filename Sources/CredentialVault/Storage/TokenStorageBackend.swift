/// A store through both protocols, as every backend of this package is: what the backend
/// resolver and the command line hand out, so that callers use the async operations from async
/// code and the synchronous ones elsewhere, without a cast.
public typealias TokenStorageBackend = TokenStorageAdapter & AsyncTokenStorageAdapter
