import CLibSecret
import Testing

@testable import CredentialVaultSecretService

/// Which answers of a provider mean "that object is gone": Qt D-Bus's answer to a `Properties`
/// call on an object KeePassXC unregistered meanwhile counts only for the interface and path
/// asked about, and only there (`callProperties`), not as a missing object everywhere.
@Suite struct GoneObjectClassificationTests {
    static let item = "/org/freedesktop/secrets/collection/secrets/355e9b36e0084dd78f8ad6baf67ace0a"
    static let itemInterface = "org.freedesktop.Secret.Item"

    /// The error glib makes of the remote D-Bus error `name` with `message`.
    static func remote(_ name: String, _ message: String) -> GLibError {
        GLibError(taking: g_dbus_error_new_for_dbus_error(name, message))
    }

    @Test func qtsAnswerForAnUnregisteredObjectMeansGoneForThatInterfaceAndPath() {
        let answer = Self.remote(
            "org.freedesktop.DBus.Error.UnknownInterface", "Interface \(Self.itemInterface) was not found in object \(Self.item)")
        #expect(answer.saysInterfaceGone(Self.itemInterface, at: Self.item))
        #expect(!answer.saysInterfaceGone("org.freedesktop.Secret.Collection", at: Self.item), "another interface")
        #expect(!answer.saysInterfaceGone(Self.itemInterface, at: Self.item + "0"), "another path")
        #expect(!answer.isNoSuchObject, "not a missing object for other calls (a delete, a create)")
    }

    @Test func otherAnswersAreNotGone() {
        let otherName = Self.remote(
            "org.freedesktop.DBus.Error.UnknownMethod", "Interface \(Self.itemInterface) was not found in object \(Self.item)")
        #expect(!otherName.saysInterfaceGone(Self.itemInterface, at: Self.item), "only UnknownInterface")
        let otherWording = Self.remote(
            "org.freedesktop.DBus.Error.UnknownInterface", "Interface \(Self.itemInterface) is not implemented by \(Self.item)")
        #expect(!otherWording.saysInterfaceGone(Self.itemInterface, at: Self.item), "only Qt's exact wording")
        let failed = Self.remote("org.freedesktop.DBus.Error.Failed", "Interface \(Self.itemInterface) was not found in object \(Self.item)")
        #expect(!failed.saysInterfaceGone(Self.itemInterface, at: Self.item))
    }
}
