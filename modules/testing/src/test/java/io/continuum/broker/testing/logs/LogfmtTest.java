package io.continuum.broker.testing.logs;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The strict parser against the cases of go-logfmt's decoder tests, plus the places where it is stricter.
 */
class LogfmtTest {
    @Test
    void readsWhatGoLogfmtReads() {
        assertEquals(Map.of("a", "1"), Logfmt.parse("a=1"));
        Map<String, String> m = Logfmt.parse("a=1 b=\"bar\" \u0192=2h3s r=\"esc\\t\" x=sf");
        assertEquals(List.of("a", "b", "\u0192", "r", "x"), List.copyOf(m.keySet()));
        assertEquals("esc\t", m.get("r"));
        assertEquals("f\n", Logfmt.parse("y=\"f\\n\"").get("y"));
        assertEquals("\"\\/'\b\f\n\r\t\u00e9\ud83d\ude00", Logfmt.parse(
                "k=\"\\\"\\\\\\/\\'\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"").get("k"));
        assertEquals("a b=c", Logfmt.parse("  k=\"a b=c\"  ").get("k"));
        assertEquals("x\\y", Logfmt.parse("k=x\\y").get("k"));
    }

    @Test
    void rejectsWhatGoLogfmtRejects() {
        for (String bad : List.of("=bar", "\"k\"=bar", "k\"ey=bar", "k=b\"ar", "k=b =ar", "a==", "k=b=ar", "a=\"1",
                "a=\"1\\", "a=\"\\t1", "a=\"\\u1\"", "a=\"\\u+123\"", "a=\"\\x\"")) {
            assertThrows(Logfmt.SyntaxException.class, () -> Logfmt.parse(bad), bad);
        }
    }

    @Test
    void isStricterWhereTheBrokersLinesMustBe() {
        for (String bad : List.of("", "   ", "key", "a=1 key", "a=", "a= b=1", "a=1\nb=2", "a=1\rb=2", "a=\"x\ny\"",
                "a=\"x\"b=1", "a=1 a=2", "a=1\tb=2", "a=\"\u0001\"")) {
            assertThrows(Logfmt.SyntaxException.class, () -> Logfmt.parse(bad), bad);
        }
    }
}
