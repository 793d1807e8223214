package io.continuum.broker.h2;

import java.util.HashMap;
import java.util.Map;

/**
 * HPACK's static table (RFC 7541 Appendix A): the encoder's lookups by field and by name, the decoder's by index.
 */
final class StaticTable {
    private static final String[][] ENTRIES = {
        {":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"}, {":path", "/index.html"},
        {":scheme", "http"}, {":scheme", "https"}, {":status", "200"}, {":status", "204"}, {":status", "206"},
        {":status", "304"}, {":status", "400"}, {":status", "404"}, {":status", "500"}, {"accept-charset", ""},
        {"accept-encoding", "gzip, deflate"}, {"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""},
        {"access-control-allow-origin", ""}, {"age", ""}, {"allow", ""}, {"authorization", ""},
        {"cache-control", ""}, {"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""},
        {"content-length", ""}, {"content-location", ""}, {"content-range", ""}, {"content-type", ""},
        {"cookie", ""}, {"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""}, {"from", ""}, {"host", ""},
        {"if-match", ""}, {"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""},
        {"if-unmodified-since", ""}, {"last-modified", ""}, {"link", ""}, {"location", ""}, {"max-forwards", ""},
        {"proxy-authenticate", ""}, {"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
        {"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
        {"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""}
    };
    /** Entries in the static table: dynamic indexes start after it. */
    static final int SIZE = ENTRIES.length;
    private static final HeaderField[] FIELDS_BY_INDEX = new HeaderField[ENTRIES.length + 1];
    private static final Map<String, Integer> FIELDS = new HashMap<>();
    private static final Map<String, Integer> NAMES = new HashMap<>();

    static {
        for (int i = ENTRIES.length - 1; i >= 0; i--) { // the lowest index wins
            FIELDS.put(ENTRIES[i][0] + '\0' + ENTRIES[i][1], i + 1);
            NAMES.put(ENTRIES[i][0], i + 1);
            FIELDS_BY_INDEX[i + 1] = new HeaderField(ENTRIES[i][0], ENTRIES[i][1]);
        }
    }

    private StaticTable() {
    }

    /** @return the entry at {@code index}, 1 to {@link #SIZE} */
    static HeaderField entry(int index) {
        return FIELDS_BY_INDEX[index];
    }

    /** @return the index of the entry with this name and value, 0 if none */
    static int indexOf(String name, String value) {
        return FIELDS.getOrDefault(name + '\0' + value, 0);
    }

    /** @return the lowest index of an entry with this name, 0 if none */
    static int indexOfName(String name) {
        return NAMES.getOrDefault(name, 0);
    }
}
