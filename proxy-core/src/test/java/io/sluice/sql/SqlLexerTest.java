package io.sluice.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.sql.SqlLexer.Kind;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SqlLexerTest {

    /** UTF-8 bytes, the way a packet is read (the proxy's own byte source is over a Netty buffer). */
    private static final SqlLexer.Source<byte[]> UTF8 = (bytes, index) -> bytes[index] & 0xFF;

    /** The code tokens of {@code sql}, as {@code KIND text}. */
    private static List<String> code(String sql) {
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < sql.length(); ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, sql.length());
            int end = SqlLexer.end(token);
            assertThat(end).as("a token moves on").isGreaterThan(i);
            if (SqlLexer.isCode(SqlLexer.kind(token))) {
                tokens.add(SqlLexer.kind(token) + " " + sql.substring(i, end));
            }
            i = end;
        }
        return tokens;
    }

    /** Every token of {@code sql}, white space and comments too, as {@code KIND text}. */
    private static List<String> all(String sql) {
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < sql.length(); ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, sql.length());
            tokens.add(SqlLexer.kind(token) + " " + sql.substring(i, SqlLexer.end(token)));
            i = SqlLexer.end(token);
        }
        return tokens;
    }

    @Test
    void wordsNumbersStringsAndPunctuation() {
        assertThat(code("SELECT c, 42 FROM t1 WHERE s = 'a' AND k=1.5e3")).containsExactly("WORD SELECT",
                "WORD c", "PUNCTUATION ,", "NUMBER 42", "WORD FROM", "WORD t1", "WORD WHERE", "WORD s",
                "PUNCTUATION =", "STRING 'a'", "WORD AND", "WORD k", "PUNCTUATION =", "NUMBER 1.5e3");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
        "'it''s'                 | STRING",
        "'a\\'b'                 | STRING",
        "\"x\\\"y\"              | STRING",
        "X'0A'                   | STRING",
        "b'01'                   | STRING",
        "N'naïve'                | STRING",
        "`col ``1```             | QUOTED_IDENTIFIER",
        "`a\\`                   | QUOTED_IDENTIFIER",
        "0xFF                    | NUMBER",
        "0b0101                  | NUMBER",
        ".5                      | NUMBER",
        "1.                      | NUMBER",
        "2E-3                    | NUMBER",
        "1st                     | WORD",
        "0xyz                    | WORD",
        "café_$1                 | WORD",
        "@v                      | VARIABLE",
        "@'my var'               | VARIABLE",
        "@@session.sql_mode      | VARIABLE",
        "@@autocommit            | VARIABLE",
        "<=>                     | PUNCTUATION",
        ":=                      | PUNCTUATION",
        "->>                     | PUNCTUATION",
        "<>                      | PUNCTUATION",
        "&&                      | PUNCTUATION",
    })
    void oneToken(String text, Kind kind) {
        assertThat(all(text)).containsExactly(kind + " " + text);
    }

    @Test
    void commentsAreNotCodeButExecutableCommentsAre() {
        assertThat(all("a -- x\n#y\n/* z */b")).containsExactly("WORD a", "SPACE  ", "COMMENT -- x", "SPACE \n",
                "COMMENT #y", "SPACE \n", "COMMENT /* z */", "WORD b");
        assertThat(all("/*!40101 SET @a=1*/;")).containsExactly("EXECUTABLE_COMMENT_START /*!40101", "SPACE  ",
                "WORD SET", "SPACE  ", "VARIABLE @a", "PUNCTUATION =", "NUMBER 1", "EXECUTABLE_COMMENT_END */",
                "PUNCTUATION ;");
        assertThat(code("/*M!100101 KILL */")).containsExactly("WORD KILL");
        assertThat(code("SELECT /*+ NO_ICP(t) */ 1")).containsExactly("WORD SELECT", "NUMBER 1");
    }

    @Test
    void whatLooksLikeACommentButIsNot() {
        assertThat(code("1--1")).containsExactly("NUMBER 1", "PUNCTUATION -", "PUNCTUATION -", "NUMBER 1");
        assertThat(code("2*/*c*/3")).containsExactly("NUMBER 2", "PUNCTUATION *", "NUMBER 3");
        assertThat(code("'-- #' `/*`")).containsExactly("STRING '-- #'", "QUOTED_IDENTIFIER `/*`");
        assertThat(code("a@b @ c")).containsExactly("WORD a", "VARIABLE @b", "PUNCTUATION @", "WORD c");
    }

    @Test
    void anUnterminatedTokenEndsWithTheText() {
        assertThat(all("SELECT 'abc")).containsExactly("WORD SELECT", "SPACE  ", "STRING 'abc");
        assertThat(all("x /* never")).containsExactly("WORD x", "SPACE  ", "COMMENT /* never");
        assertThat(all("'\\")).containsExactly("STRING '\\");
        assertThat(all("/*")).containsExactly("COMMENT /*");
    }

    @Test
    void bytesOfUtf8LexAsTheirCharacters() {
        String sql = "SELECT naïve, 'é' FROM `tâble` WHERE x = @été -- ü\n";
        byte[] bytes = sql.getBytes(StandardCharsets.UTF_8);
        List<String> fromBytes = new ArrayList<>();
        for (int i = 0; i < bytes.length; ) {
            long token = SqlLexer.next(UTF8, bytes, i, bytes.length);
            int end = SqlLexer.end(token);
            fromBytes.add(SqlLexer.kind(token) + " " + new String(bytes, i, end - i, StandardCharsets.UTF_8));
            i = end;
        }

        assertThat(fromBytes).isEqualTo(all(sql));
    }

    @Test
    void skipsToCodeAndComparesKeywordsWhateverTheirCase() {
        String sql = "  /* a */ -- b\n  select";
        int start = SqlLexer.skipToCode(SqlLexer.CHARS, sql, 0, sql.length());

        assertThat(start).isEqualTo(sql.indexOf("select"));
        assertThat(SqlLexer.is(SqlLexer.CHARS, sql, start, sql.length(), "SELECT")).isTrue();
        assertThat(SqlLexer.is(SqlLexer.CHARS, sql, start, sql.length() - 1, "SELECT")).isFalse();
        assertThat(SqlLexer.is(SqlLexer.CHARS, sql, start, sql.length(), "SELECTS")).isFalse();
        assertThat(SqlLexer.skipToCode(SqlLexer.CHARS, "  -- only", 0, 9)).isEqualTo(9);
    }
}
