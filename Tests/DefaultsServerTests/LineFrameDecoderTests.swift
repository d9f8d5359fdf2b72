@testable import DefaultsCore
@testable import DefaultsServer
import NIOCore
import TestThreads
import Testing

@Suite(.ownThreads) struct LineFrameDecoderTests {
    /// Feeds `chunks` one read at a time and takes out every frame after each, as the
    /// connection handler does; `finish` adds what end of input yields.
    func frames(_ chunks: [String], limit: Int = 16, finish: Bool = false) -> [String] {
        var decoder = LineFrameDecoder(maximumLineBytes: limit)
        var result: [String] = []
        func take(_ frame: LineFrameDecoder.Frame) {
            switch frame {
            case .line(let line): result.append(String(buffer: line))
            case .tooLong: result.append("<overlong>")
            }
        }
        for chunk in chunks {
            decoder.receive(ByteBuffer(string: chunk))
            while let frame = decoder.next() { take(frame) }
        }
        if finish, let last = decoder.finish() { take(last) }
        return result
    }

    @Test func splitsLinesAndStripsCarriageReturns() {
        #expect(frames(["one\ntwo\r\nthr", "ee\n\n"]) == ["one", "two", "three", ""])
    }

    /// The last line without a newline is the same line as with one: no final `\r`, and the
    /// same limit.
    @Test func theLastLineAtEndOfInputFollowsTheSameRule() {
        #expect(frames(["one\r\ntwo\r"], finish: true) == ["one", "two"])
        #expect(frames(["0123456789\r"], limit: 10, finish: true) == ["0123456789"])
        #expect(frames(["0123456789a"], limit: 10, finish: true) == ["<overlong>"])
    }

    @Test func aLineSplitAcrossManyReadsIsWhole() {
        #expect(frames(["a", "b", "c\r", "\nd", "\n"]) == ["abc", "d"])
    }

    @Test func anOverlongLineIsReportedOnceAndItsRestDiscarded() {
        #expect(frames(["0123456789", "abcdefghijklmnop", "tail\nnext\n"], limit: 8) == ["<overlong>", "next"])
    }

    @Test func anOverlongLineInOneChunkIsReported() {
        #expect(frames(["123456\nok\n"], limit: 4) == ["<overlong>", "ok"])
    }

    @Test func aLineOfExactlyTheLimitPasses() {
        #expect(frames(["1234\n1234\r\n"], limit: 4) == ["1234", "1234"])
        #expect(frames(["12", "34\n"], limit: 4) == ["1234"])
        // A read that ends between the line's `\r` and its `\n`.
        #expect(frames(["1234\r", "\n"], limit: 4) == ["1234"])
        #expect(frames(["12345", "\n"], limit: 4) == ["<overlong>"])
    }

    @Test func theLastLineWithoutNewlineCountsAtEndOfInput() {
        #expect(frames(["a\nlast"]) == ["a"])
        #expect(frames(["a\nlast"], finish: true) == ["a", "last"])
        #expect(frames(["a\n"], finish: true) == ["a"])
    }

    @Test func theRestOfAnOverlongLineIsNotALastLine() {
        #expect(frames(["0123456789", "abc"], limit: 8, finish: true) == ["<overlong>"])
    }
}
