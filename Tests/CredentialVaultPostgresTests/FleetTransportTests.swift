import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultPostgres

/// Which connection strings reach their server over TCP, what `sslmode` they get, and which
/// need `insecureTransport` (no server needed: the rule is decided before any connect).
struct FleetTransportTests {
    func security(_ conninfo: String, environment: [String: String] = [:]) throws -> TransportSecurity {
        TransportSecurity(try ConnectionString(conninfo), environment: environment)
    }

    @Test func aUnixSocketNeedsNothing() throws {
        for conninfo in ["host=/run/postgresql dbname=fleet", "dbname=fleet", "host=/tmp sslmode=disable", "postgresql:///fleet?host=/tmp"] {
            let transport = try security(conninfo)
            #expect(!transport.usesTCP && !transport.isWeak && transport.defaultedMode == nil, "\(conninfo)")
            #expect(throws: Never.self) { try transport.check(allowed: false) }
        }
    }

    @Test func tcpWithoutAnSSLModeGetsVerifyFull() throws {
        for conninfo in ["host=db.example dbname=fleet", "hostaddr=10.0.0.5 dbname=fleet", "postgresql://db.example/fleet", "host=/tmp,db2.example"] {
            let transport = try security(conninfo)
            #expect(transport.usesTCP && transport.defaultedMode == "verify-full" && transport.warning == nil, "\(conninfo)")
        }
        #expect(try security("dbname=fleet", environment: ["PGHOST": "db.example"]).defaultedMode == "verify-full")
    }

    @Test func aWeakerModeOverTCPIsRefusedUnlessAllowed() throws {
        for mode in ["disable", "allow", "prefer", "require", "verify-ca"] {
            for conninfo in ["host=db.example sslmode=\(mode)", "postgresql://u@db.example/fleet?sslmode=\(mode)"] {
                let transport = try security(conninfo)
                #expect(transport.isWeak && transport.warning?.contains("sslmode=\(mode)") == true, "\(conninfo)")
                #expect(throws: Never.self) { try transport.check(allowed: true) }
                #expect { try transport.check(allowed: false) } throws: { error in
                    guard case .invalidArgument(let why) = error as? CredentialVaultError else { return false }
                    return why.contains("insecureTransport") && !why.contains("db.example")
                }
            }
        }
        // PGSSLMODE counts as asked for.
        #expect(try security("host=db.example", environment: ["PGSSLMODE": "require"]).isWeak)
        #expect(try !security("host=db.example sslmode=verify-full", environment: ["PGSSLMODE": "disable"]).isWeak)
    }

    /// A service names its host and may name its sslmode in a file libpq reads at connect time
    /// (`pg_service.conf`): the store cannot see that host, so it decides as for TCP.
    @Test func aServiceIsDecidedAsTCP() throws {
        for conninfo in ["service=fleet", "service=fleet dbname=x", "postgresql:///fleet?service=fleet"] {
            let transport = try security(conninfo)
            #expect(transport.usesTCP && transport.defaultedMode == "verify-full" && !transport.isWeak, "\(conninfo)")
        }
        #expect(try security("dbname=fleet", environment: ["PGSERVICE": "fleet"]).defaultedMode == "verify-full")
        for (conninfo, environment) in [("service=fleet sslmode=disable", [:]), ("dbname=fleet", ["PGSERVICE": "fleet", "PGSSLMODE": "prefer"])] {
            let transport = try security(conninfo, environment: environment)
            #expect(transport.isWeak, "\(conninfo) \(environment)")
            #expect(throws: CredentialVaultError.self) { try transport.check(allowed: false) }
        }
    }
}
