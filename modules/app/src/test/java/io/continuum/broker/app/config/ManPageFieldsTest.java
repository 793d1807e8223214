package io.continuum.broker.app.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 57 item 6: the man page's CONFIGURATION section lists every field of {@link Fields}, rendered from it as
 * docs/configuration.md's table is (ShippedExampleTest): the block between the markers is this rendering, so a new
 * field (as {@code log_level} once was) cannot be missing from it. On a difference the expected block is the
 * assertion's expected value, and is written to {@code target/man-fields.roff} to paste.
 */
class ManPageFieldsTest {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent().getParent();
    private static final Path MAN = ROOT.resolve("packaging/continuum-event-broker.1");
    private static final String BEGIN = ".\\\" fields:begin (rendered from Fields.java; checked by ManPageFieldsTest)";
    private static final String END = ".\\\" fields:end";
    private static final Pattern CODE = Pattern.compile("`([^`]*)`");
    private static final Pattern LINK = Pattern.compile("\\[([^\\]]*)\\]\\(#[^)]*\\)");

    /** Every field as a tagged paragraph: its name, its type, default and bounds, what it is, its variable. */
    static String fieldList() {
        StringBuilder sb = new StringBuilder();
        for (Field<?> f : Fields.ALL) {
            String dflt = switch (f.presence()) {
                case REQUIRED -> "required";
                case DEFAULT -> "default " + bold(f.defaultText());
                case DERIVED -> "default " + roff(f.defaultText());
            };
            sb.append(".TP\n.B ").append(f.path()).append('\n')
                    .append(roff(f.type())).append("; ").append(dflt)
                    .append(f.bounds().isEmpty() ? "" : "; " + roff(f.bounds())).append(".\n")
                    .append(line(roff(f.description()))).append('\n')
                    .append("Variable: ").append(bold(f.envName())).append(".\n");
        }
        return sb.toString();
    }

    /** Markdown to roff: {@code `code`} in bold, a link to a section of the guide in italics, escapes. */
    private static String roff(String markdown) {
        String text = markdown.replace("\\", "\\e").replace("→", "\\(->");
        text = LINK.matcher(text).replaceAll(m -> Matcher.quoteReplacement(
                "\\fI" + m.group(1) + "\\fR in docs/configuration.md"));
        return CODE.matcher(text).replaceAll(m -> Matcher.quoteReplacement(bold(m.group(1))));
    }

    private static String bold(String code) {
        return "\\fB" + code.replace("\\", "\\e").replace("-", "\\-") + "\\fR";
    }

    /** A text line that starts with a control character would be read as a request. */
    private static String line(String text) {
        return text.startsWith(".") || text.startsWith("'") ? "\\&" + text : text;
    }

    @Test
    void theManPageListsEveryFieldAsFieldsJavaDeclaresIt() throws Exception {
        String man = Files.readString(MAN);
        String expected = fieldList();
        Path paste = ROOT.resolve("modules/app/target/man-fields.roff");
        Files.createDirectories(paste.getParent());
        Files.writeString(paste, BEGIN + "\n" + expected + END + "\n");
        int begin = man.indexOf(BEGIN);
        int end = man.indexOf(END);
        assertTrue(begin >= 0 && end > begin, "the man page lacks the markers " + BEGIN + " and " + END);
        assertEquals(expected, man.substring(begin + BEGIN.length() + 1, end),
                "the man page's field list differs from Fields.java; paste " + paste);
    }

    @Test
    void everyFieldIsNamedInTheManPage() throws Exception {
        String man = Files.readString(MAN);
        for (Field<?> f : Fields.ALL) {
            assertTrue(man.contains(".B " + f.path() + "\n"), f.path() + " is not in the man page");
        }
    }
}
