import ArgumentParser
import CChorusFloor
import Foundation

/// The machine's floor for the bridge's CPU figure: a relay in C with one epoll loop and no work besides a read and a
/// write per message, driven by the same kind of load (small messages every 20 ms per call, calls spread evenly over
/// the interval, over loopback TCP, the load in another process). What it spends is what the kernel charges for
/// moving the messages; any bridge relaying as many messages spends at least that.
struct Floor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The CPU a minimal C relay spends on the same message load over loopback: the floor under the bridge's CPU figure.")

    @ArgumentParser.Option(help: "Concurrent calls (one inbound and one outbound connection each).")
    var calls = 200

    @ArgumentParser.Option(help: "Seconds measured (after a 1 s warm-up).")
    var seconds = 10.0

    @ArgumentParser.Option(help: "Messages per second per call.")
    var rate = 50.0

    @ArgumentParser.Option(help: "Message size in bytes (a Twilio media frame is about 300).")
    var size = 300

    func validate() throws {
        guard calls > 0, calls <= 5_000 else { throw ValidationError("--calls must be between 1 and 5000") }
        guard seconds >= 1 else { throw ValidationError("--seconds must be at least 1") }
        guard rate > 0, rate <= 1_000 else { throw ValidationError("--rate must be between 0 and 1000") }
        guard size > 0, size <= 65_536 else { throw ValidationError("--size must be between 1 and 65536") }
    }

    func run() throws {
        var inPort: Int32 = 0
        var outPort: Int32 = 0
        let inListener = chorus_floor_listen(&inPort)
        let outListener = chorus_floor_listen(&outPort)
        guard inListener >= 0, outListener >= 0 else { throw ValidationError("the reference relay needs Linux (epoll) and loopback TCP") }
        let peer = Process()
        peer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        peer.arguments = [
            "floor-peer", "--in-port", String(inPort), "--out-port", String(outPort), "--calls", String(calls), "--size", String(size),
            "--interval-ms", String(1_000 / rate), "--seconds", String(seconds + 3),
        ]
        try peer.run()
        defer {
            if peer.isRunning { peer.terminate() }
            peer.waitUntilExit()
        }
        var result = chorus_floor_result()
        guard chorus_floor_relay(inListener, outListener, Int32(calls), Int32(size), 1, seconds, &result) == 0, result.wall_s > 0 else {
            throw ValidationError("the reference relay could not accept its connections")
        }
        close(inListener)
        close(outListener)
        let cpu = result.user_ms + result.kernel_ms
        let perCallSecond = cpu / (result.wall_s * Double(calls))
        let perMessage = result.messages > 0 ? cpu * 1_000 / Double(result.messages) : 0
        let messagesPerCallSecond = Double(result.messages) / (result.wall_s * Double(calls))
        print("reference relay (C, one epoll loop, a read and a write per message): \(calls) calls × \(rate) messages/s of \(size) bytes")
        print("messages relayed      \(result.messages) (\(String(format: "%.1f", messagesPerCallSecond)) per call-second)")
        print(
            "CPU per call-second   \(String(format: "%.3f", perCallSecond)) ms (\(String(format: "%.0f", cpu > 0 ? 100 * result.kernel_ms / cpu : 0)) % of it in the kernel), "
                + "\(String(format: "%.1f", perMessage)) µs per relayed message")
        print(
            "calls=\(calls) messages_per_call_s=\(String(format: "%.1f", messagesPerCallSecond)) cpu_ms_per_call_s=\(String(format: "%.3f", perCallSecond)) us_per_message=\(String(format: "%.2f", perMessage))"
        )
    }
}

/// The load of ``Floor``, in its own process.
struct FloorPeer: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "floor-peer", abstract: "The load of `floor` (started by it).", shouldDisplay: false)

    @ArgumentParser.Option var inPort: Int32
    @ArgumentParser.Option var outPort: Int32
    @ArgumentParser.Option var calls: Int32
    @ArgumentParser.Option var size: Int32
    @ArgumentParser.Option var intervalMs: Double
    @ArgumentParser.Option var seconds: Double

    func run() throws {
        guard chorus_floor_peer(inPort, outPort, calls, size, intervalMs, seconds) == 0 else {
            throw ValidationError("the load could not reach the reference relay")
        }
    }
}
