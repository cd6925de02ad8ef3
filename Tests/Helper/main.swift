// A helper process for the multi-process, crash and fault tests. Not part of the product.
//
//   store-many VAULT KEYFILE PREFIX COUNT [DELETE_EVERY]
//       saves COUNT credentials PREFIX-0...; prints "ack N" after each durable save.
//   crash-writer VAULT KEYFILE PREFIX
//       runs CrashPlan(PREFIX) until killed; prints "ready", then "ack I" after step I returned.
//   change-secret-loop VAULT PASSFILE_A PASSFILE_B
//       opens with A or B, then changes the passphrase back and forth until killed; prints
//       "ready A|B", then "key A|B" after each change returned.
//   rotate-loop VAULT KEYFILE
//       rotates the data key until killed; prints "ready", then "rotated N".
//   stress VAULT KEYFILE PREFIX COUNT
//       runs StressPlan(PREFIX, COUNT), incrementing the shared counter under exclusive access.
//   hold-exclusive VAULT KEYFILE
//       inside withExclusiveAccess saves one credential, prints "holding", then sleeps.
//   save-as-user UID VAULT KEYFILE
//       as UID (from root): one save, then one rotation; prints "saved" or "error DESCRIPTION",
//       then "rotate: rotated" or "rotate: error DESCRIPTION".
//   scan-memory PID
//       reads a secret on stdin, searches /proc/PID/mem for it (see MemoryScan.swift).
//   hold-lock VAULT SECONDS
//       holds the lock file with a raw flock for SECONDS, printing "locked" once it has it.
//   request-as-user UID SOCKET NAME
//       as UID (from root), asks serve-credentials at SOCKET from the abstract address NAME;
//       prints "received N" or "error WHY" (CredentialClientCommands.swift).
//   request-in-cgroup CGROUP SOCKET NAME
//       the same, from inside the cgroup directory CGROUP (it moves itself there first).
//   rollback-crash-writer VAULT KEYFILE POINT N
//       saves until a custodian kills the process at POINT of save N (RollbackCrashCommands.swift).
//   disable-core-dumps
//       ProcessHardening.disableCoreDumps(), then waits for stdin to close (HardeningCommands.swift).
//
// Device-only records use the identity CREDVAULT_TEST_HOST_SECRET + CREDVAULT_TEST_MACHINE_ID.
// Exit 3 with one line on stderr on failure.
import Foundation

let args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else { fail("usage: credvault-testhelper COMMAND ...") }
let rest = Array(args.dropFirst())
do {
    switch (command, rest.count) {
    case ("store-many", 4...): try storeMany(rest)
    case ("crash-writer", 3): try crashWriter(rest)
    case ("change-secret-loop", 3): try changeSecretLoop(rest)
    case ("rotate-loop", 2): try rotateLoop(rest)
    case ("stress", 4): try await stress(rest)
    case ("hold-exclusive", 2): try await holdExclusive(rest)
    case ("hold-lock", 2): holdLock(rest)
    case ("scan-memory", 1): scanMemory(rest)
    case ("save-as-user", 3): try saveAsUser(rest)
    case ("disable-core-dumps", 0): try disableCoreDumps()
    case ("request-as-user", 3): requestAsUser(rest)
    case ("request-in-cgroup", 3): requestInCgroup(rest)
    case ("rollback-crash-writer", 4): try rollbackCrashWriter(rest)
    default: fail("unknown helper command or wrong arguments: \(command)")
    }
} catch {
    fail("\(command): \(error)")
}
