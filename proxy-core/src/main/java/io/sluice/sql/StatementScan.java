package io.sluice.sql;

import io.sluice.sql.SqlLexer.Kind;
import io.sluice.sql.SqlLexer.Source;

/**
 * The one analysis of a statement (issue #38, decision 136): one pass of {@link SqlLexer} over its text that finds
 * both what it leaves on its session ({@link #effects()}, {@link SessionEffects}: transaction pooling's pins,
 * session pooling's locks, the state follower) and what decides where it may run ({@link #routeFacts()},
 * {@link #first()}, {@link #second()}, {@link #third()}: the read/write router's {@code StatementClassifier}),
 * with its {@code ?} placeholders counted on the way. Every part of Sluice that asks what a statement does reads
 * it from here, so that what one of them learns holds for all; a policy that needs both answers scans once.
 *
 * <p>No parser: words outside string literals, quoted identifiers and comments, compared with {@link Keyword}.
 * MySQL's executable comments {@code /*!...*}{@code /} are code; a versioned one ({@code /*!NNNNN},
 * {@code /*M!}) gives the statement two readings, and {@link #rescanWithoutVersioned} gives the router the second.
 *
 * <p>An instance is reused: {@link #scan} overwrites the last result and allocates nothing. It is not thread-safe;
 * a session's policy owns one.
 */
public final class StatementScan {

    /** UTF-8 bytes in an array, as the lexer reads them. */
    public static final Source<byte[]> BYTE_ARRAY = (bytes, index) -> bytes[index] & 0xFF;

    /** Where the names of tables and views with hidden code come from; read once per scan. */
    private final java.util.function.Supplier<HiddenCodeNames> hiddenCode;
    /** What the session's character set and sql_mode make the lexer read otherwise ({@link UnreadText}). */
    private final java.util.function.IntSupplier unread;
    private HiddenCodeNames hidden = HiddenCodeNames.NONE;
    /** The code token being read is a name of {@link #hidden}'s: looked up once for both readings. */
    private boolean namesHidden;

    /** The effects that make Sluice rewrite a statement's text: left out where the text is not read (decision 204). */
    private static final int REWRITTEN = SessionEffects.TRACKED_VARIABLES | SessionEffects.UNSCOPED_SYSTEM_VARIABLE
            | SessionEffects.CALLS_LAST_INSERT_ID | SessionEffects.PREVIOUS_VALUES;

    // The result.
    private int effects;
    private int facts;
    private int outerFacts;
    private Keyword first;
    private Keyword second;
    private Keyword third;
    private boolean versioned;
    private int placeholders;

    // What the effects' reading keeps from token to token; each statement of a multi-statement is read alone.
    private int effectWords;
    private int effectTokens; // code tokens of the statement so far, this one included
    private Keyword effectFirst;
    private boolean tableNext; // the next name is a table's (INSERT INTO t (a)), not a function's
    private boolean effectAfterDot; // the last code token was '.' (db.f(), db.t)
    private boolean lastWasTable; // the last code token named a table (db in INTO db.t)
    private boolean compound; // a stored program's body: BEGIN, THEN, ELSE, DO, LOOP, REPEAT start statements
    private final LexicalAssignments assignments = new LexicalAssignments();

    // What the route's reading keeps; a multi-statement is one statement to it (MULTI).
    private int words;
    private Keyword previous;
    private int depth;
    private boolean ended; // a ';' was seen: more code makes it a multi-statement
    private boolean afterDot;
    private boolean afterComma; // the previous code token was a ',' outside parentheses
    private int codeEnd; // where the previous code token ended, and what it was
    private Kind codeKind;
    private boolean inVersioned;

    /** A scan that knows no table or view with hidden code. */
    public StatementScan() {
        this(() -> HiddenCodeNames.NONE);
    }

    /**
     * A scan that counts a name of {@code hiddenCode}'s (a table with triggers, a view, whose code leaves session
     * state) as {@link SessionEffects#STORED_CODE} and {@link RouteFacts#SIDE_EFFECT} (decision 200).
     */
    public StatementScan(java.util.function.Supplier<HiddenCodeNames> hiddenCode) {
        this(hiddenCode, () -> 0);
    }

    /**
     * As {@link #StatementScan(java.util.function.Supplier)}, for a session whose character set or sql_mode makes
     * the server read some bytes otherwise ({@code unread}, {@link UnreadText}'s kinds, read once per scan): a text
     * with such a byte counts as code the text does not show (decision 204).
     */
    public StatementScan(java.util.function.Supplier<HiddenCodeNames> hiddenCode,
            java.util.function.IntSupplier unread) {
        this.hiddenCode = hiddenCode;
        this.unread = unread;
    }

    /** Scans SQL text; {@code text} is borrowed, and nothing of it is kept. */
    public <T> StatementScan scan(Source<T> s, T text, int from, int to) {
        run(s, text, from, to, false);
        return this;
    }

    /** Scans SQL text. */
    public StatementScan scan(CharSequence sql) {
        return scan(SqlLexer.CHARS, sql, 0, sql.length());
    }

    /** Scans SQL text in UTF-8. */
    public StatementScan scan(byte[] sql) {
        return scan(BYTE_ARRAY, sql, 0, sql.length);
    }

    /**
     * Scans the body of a trigger, a routine or an event, whose statements may start after {@code BEGIN},
     * {@code THEN}, {@code ELSE}, {@code DO}, {@code LOOP} and {@code REPEAT} as well as after {@code ;}: a
     * {@code SET TRANSACTION} there is read as one (decision 200). The route's facts are not meant for it.
     */
    public StatementScan scanBody(CharSequence sql) {
        compound = true;
        try {
            return scan(sql);
        } finally {
            compound = false;
        }
    }

    /**
     * The route's second reading of the text last scanned (pass it again), with the content of versioned executable
     * comments left out: {@link #routeFacts()} and the words change, {@link #effects()} and {@link #placeholders()}
     * do not.
     */
    public <T> StatementScan rescanWithoutVersioned(Source<T> s, T text, int from, int to) {
        run(s, text, from, to, true);
        return this;
    }

    /** Convenience for {@link #rescanWithoutVersioned(Source, Object, int, int)} on a string. */
    public StatementScan rescanWithoutVersioned(CharSequence sql) {
        return rescanWithoutVersioned(SqlLexer.CHARS, sql, 0, sql.length());
    }

    /** What the statement leaves on its session: a combination of {@link SessionEffects}' flags. */
    public int effects() {
        return effects;
    }

    /**
     * The {@link RouteFacts} of the statement that decides where it runs: after MariaDB's
     * {@code SET STATEMENT var = value FOR}, the statement after FOR.
     */
    public int routeFacts() {
        return facts;
    }

    /** The facts found before a {@code SET STATEMENT ... FOR} (its hints and access mode apply), or -1 for none. */
    public int outerRouteFacts() {
        return outerFacts;
    }

    /** The first word of the deciding statement, if a {@link Keyword}, else {@code null}. */
    public Keyword first() {
        return first;
    }

    /** The second word, if a {@link Keyword}. */
    public Keyword second() {
        return second;
    }

    /** The third word, if a {@link Keyword}. */
    public Keyword third() {
        return third;
    }

    /** Whether a versioned executable comment was seen anywhere: the statement has two readings. */
    public boolean versioned() {
        return versioned;
    }

    /** What the text's SET statements change in how the server reads the session's later text (decision 204). */
    public LexicalAssignments assignments() {
        return assignments;
    }

    /**
     * How many {@code ?} placeholders the text has outside literals and comments: a guess, which the server's
     * parameter count confirms or refutes; -1 for text it does not try to read (executable comments, unclosed ones).
     */
    public int placeholders() {
        return placeholders;
    }

    private <T> void run(Source<T> s, T text, int from, int to, boolean routeOnly) {
        facts = 0;
        outerFacts = -1;
        first = null;
        second = null;
        third = null;
        versioned = false;
        resetRoute();
        inVersioned = false;
        hidden = hiddenCode.get();
        if (!routeOnly) {
            effects = 0;
            placeholders = 0;
            effectWords = 0;
            effectTokens = 0;
            effectFirst = null;
            tableNext = false;
            effectAfterDot = false;
            lastWasTable = false;
            assignments.reset();
        }
        int unreadNow = unread.getAsInt();
        boolean ansiQuotes = (unreadNow & UnreadText.DOUBLE_QUOTE) != 0;
        boolean nameUnread = false; // ANSI_QUOTES: a "name" read as a string hides what it is (decision 204)
        for (int i = from; i < to; ) {
            long token = SqlLexer.next(s, text, i, to);
            int start = i;
            i = SqlLexer.end(token);
            Kind kind = SqlLexer.kind(token);
            if (!SqlLexer.isCode(kind)) {
                nonCode(s, text, kind, start, i, routeOnly);
                continue;
            }
            nameUnread |= ansiQuotes && kind == Kind.STRING && UnreadText.nameUnread(s, text, start, i, to, hidden);
            Keyword word = kind == Kind.WORD ? Keyword.of(s, text, start, i) : null;
            namesHidden = namesHiddenCode(s, text, kind, start, i);
            if (!routeOnly) {
                effect(s, text, kind, word, start, i, to);
            }
            if (!inVersioned) {
                route(s, text, kind, word, start, i, to);
            }
        }
        // Decision 204: the session's character set or sql_mode, or a statement of the text that changed them
        assignments.finish(); // idempotent: a reading for the route alone finds none open
        int unreadHere = unreadNow & ~UnreadText.DOUBLE_QUOTE
                | ((facts & RouteFacts.MULTI) != 0 ? assignments.unreadAfter() : 0);
        if (nameUnread || unreadHere != 0 && UnreadText.in(s, text, from, to, unreadHere)) {
            facts |= RouteFacts.SIDE_EFFECT;
            if (!routeOnly) {
                // what the text seems to call is not rewritten: its strings may be elsewhere than the lexer saw
                effects = effects & ~REWRITTEN | SessionEffects.STORED_CODE;
                placeholders = -1;
            }
        }
    }

    private void resetRoute() {
        words = 0;
        previous = null;
        depth = 0;
        ended = false;
        afterDot = false;
        afterComma = false;
        codeEnd = -1;
        codeKind = null;
    }

    private <T> void nonCode(Source<T> s, T text, Kind kind, int start, int end, boolean routeOnly) {
        if (kind == Kind.COMMENT) {
            facts |= RouteHints.of(s, text, start, end);
            if (!routeOnly && s.at(text, start) == '/' && !(end - start >= 4 && s.at(text, end - 2) == '*'
                    && s.at(text, end - 1) == '/')) {
                placeholders = -1; // an unclosed comment
            }
        } else if (kind == Kind.EXECUTABLE_COMMENT_START) {
            placeholders = routeOnly ? placeholders : -1;
            // /*! runs everywhere; /*!NNNNN only from that version on, /*M! on MariaDB only: two readings
            if (end - start > 3) {
                facts |= RouteFacts.VERSIONED;
                versioned = true;
                inVersioned = routeOnly;
            }
        } else if (kind == Kind.EXECUTABLE_COMMENT_END) {
            inVersioned = false;
        }
    }

    /** One code token, for the session effects. */
    private <T> void effect(Source<T> s, T text, Kind kind, Keyword word, int start, int i, int to) {
        int c = s.at(text, start);
        effectTokens++;
        if (effectFirst == Keyword.SET) {
            assignments.token(s, text, kind, start, i, effectTokens == 2);
        }
        boolean dotBefore = effectAfterDot;
        effectAfterDot = kind == Kind.PUNCTUATION && c == '.';
        boolean tableName = tableNext;
        tableNext = effectAfterDot ? lastWasTable : word != null && namesTableNext(word);
        lastWasTable = tableName;
        if ((kind == Kind.WORD && effectWords > 0 || kind == Kind.QUOTED_IDENTIFIER) && !isDdl(effectFirst)
                && !tableName && RouteWords.opensCall(s, text, i, to) && (dotBefore || !builtIn(s, text, start, i, kind))) {
            effects |= SessionEffects.STORED_CODE; // a stored function: its body may take a lock the text does not show
        }
        if (namesHidden) {
            effects |= SessionEffects.STORED_CODE; // a table's trigger, a view's function (decision 200)
        }
        if (kind == Kind.VARIABLE || kind == Kind.PUNCTUATION && c == '@') {
            variableEffect(s, text, start, i, to);
            return;
        }
        if (kind == Kind.PUNCTUATION) {
            if (c == ';') {
                // A multi-statement: each statement is read as if it came alone (a SET TRANSACTION after DO 0 is
                // still one, issue #38); the flags add up.
                effectWords = 0;
                effectTokens = 0;
                effectFirst = null;
            } else if (c == '?' && placeholders >= 0) {
                placeholders++;
            }
            return;
        }
        if (kind == Kind.QUOTED_IDENTIFIER && i - start > 2 && RouteWords.opensCall(s, text, i, to)) {
            // `GET_LOCK`(...), `LAST_INSERT_ID`() are the same functions
            Keyword quoted = Keyword.of(s, text, start + 1, i - 1);
            effects |= quoted == null ? 0 : wordEffect(s, text, quoted, i, to);
            return;
        }
        if (kind != Kind.WORD) {
            return;
        }
        if (compound && startsBodyStatement(word)) {
            effectWords = 0; // as after ';': the next word is a statement's first
            effectTokens = 0;
            effectFirst = null;
            return;
        }
        effectWords++;
        Keyword firstWord = effectFirst;
        if (effectWords == 1) {
            effectFirst = word;
            effects |= firstWordEffect(word);
            if (word == null && SqlLexer.is(s, text, start, i, "BACKUP")) {
                effects |= SessionEffects.BACKUP_LOCK; // not a keyword: the router knows no such first word either
            }
            if (word == Keyword.BEGIN && !RouteWords.opensCall(s, text, i, to)) {
                effects |= SessionEffects.BEGINS_TRANSACTION;
            }
        } else if (word != null) {
            effects |= laterWordEffect(s, text, word, firstWord, i, to);
        }
        if (word != null) {
            effects |= wordEffect(s, text, word, i, to);
        }
        if (word == Keyword.VALUE && previous == Keyword.NEXT) {
            effects |= SessionEffects.NEXT_SEQUENCE_VALUE; // NEXT VALUE FOR s (the route's previous word)
        }
    }

    private <T> void variableEffect(Source<T> s, T text, int start, int i, int to) {
        if (i - start < 2 || s.at(text, start + 1) != '@') {
            effects |= SessionEffects.USER_VARIABLE; // @@name is a system variable
            return;
        }
        int dot = start;
        while (dot < i && s.at(text, dot) != '.') {
            dot++;
        }
        if (effectFirst == Keyword.SET && dot == i && (i >= to || s.at(text, i) != '.')) {
            effects |= SessionEffects.UNSCOPED_SYSTEM_VARIABLE;
        }
        int name = dot == i ? start + 2 : dot + 1;
        Keyword variable = Keyword.of(s, text, name, i);
        if (variable == Keyword.LAST_INSERT_ID || variable == Keyword.IDENTITY) {
            effects |= SessionEffects.CALLS_LAST_INSERT_ID; // @@identity is LAST_INSERT_ID(), the connection's
        }
        if (effectFirst == Keyword.SET && statementVariable(variable)) {
            effects |= SessionEffects.STATEMENT_VARIABLE;
        } else if (SqlLexer.is(s, text, name, i, "WARNING_COUNT") || SqlLexer.is(s, text, name, i, "ERROR_COUNT")) {
            effects |= SessionEffects.DIAGNOSTICS; // reads the last statement's diagnostics, and leaves them
        }
    }

    private static int firstWordEffect(Keyword word) {
        if (word == null) {
            return 0;
        }
        switch (word) {
            case LOCK:
                return SessionEffects.LOCK_TABLES;
            case UNLOCK:
                return SessionEffects.UNLOCK_TABLES;
            case PREPARE:
                return SessionEffects.SQL_PREPARE;
            case CALL, EXECUTE, BINLOG:
                return SessionEffects.STORED_CODE;
            case HANDLER:
                return SessionEffects.HANDLER;
            case SELECT:
                return SessionEffects.SELECT_STATEMENT;
            default:
                return 0;
        }
    }

    /** What a word after the first adds, by its place in its statement. */
    private <T> int laterWordEffect(Source<T> s, T text, Keyword word, Keyword firstWord, int i, int to) {
        if (effectWords == 2 && firstWord == Keyword.SET && word == Keyword.ROLE) {
            return SessionEffects.SET_ROLE;
        } else if (effectWords <= 3 && firstWord == Keyword.GET && word == Keyword.DIAGNOSTICS) {
            return SessionEffects.DIAGNOSTICS; // GET [CURRENT] DIAGNOSTICS
        } else if (firstWord == Keyword.SET && statementVariable(word) && !RouteWords.opensCall(s, text, i, to)) {
            return SessionEffects.STATEMENT_VARIABLE; // not LAST_INSERT_ID(), the function
        } else if (effectWords == 2 && firstWord == Keyword.XA) {
            return word == Keyword.START || word == Keyword.BEGIN ? SessionEffects.XA_START
                    : word == Keyword.COMMIT || word == Keyword.ROLLBACK ? SessionEffects.XA_END : 0;
        } else if (effectWords == 2 && firstWord == Keyword.SET && word == Keyword.TRANSACTION) {
            return SessionEffects.SET_TRANSACTION;
        } else if (effectWords == 2 && firstWord == Keyword.START && word == Keyword.TRANSACTION) {
            return SessionEffects.BEGINS_TRANSACTION;
        } else if (effectWords == 2 && firstWord == Keyword.SHOW
                && (word == Keyword.WARNINGS || word == Keyword.ERRORS || word == Keyword.COUNT)) {
            return SessionEffects.DIAGNOSTICS;
        } else if (firstWord == Keyword.FLUSH && (word == Keyword.LOCK || word == Keyword.EXPORT)) {
            return SessionEffects.LOCK_TABLES;
        } else if (isDdl(firstWord) && (word == Keyword.TRIGGER || word == Keyword.VIEW)
                || firstWord == Keyword.RENAME && word == Keyword.TABLE && effectWords == 2
                || firstWord == Keyword.ALTER && word == Keyword.RENAME) {
            // a trigger moves with its table's new name (RENAME TABLE, ALTER TABLE ... RENAME TO); the session keeps
            // its connection, since its next statement may come before the new definition is read
            return SessionEffects.DEFINES_HIDDEN_CODE | SessionEffects.STORED_CODE;
        }
        return 0;
    }

    /** What a word adds wherever it is: the functions and words that leave state. */
    private static <T> int wordEffect(Source<T> s, T text, Keyword word, int i, int to) {
        switch (word) {
            case ROW_COUNT:
                return emptyCall(s, text, i, to) ? SessionEffects.CALLS_ROW_COUNT : 0;
            case FOUND_ROWS:
                return RouteWords.opensCall(s, text, i, to) ? SessionEffects.CALLS_FOUND_ROWS : 0;
            case LAST_INSERT_ID:
                int open = SqlLexer.skipToCode(s, text, i, to);
                if (open >= to || s.at(text, open) != '(') {
                    return 0;
                }
                int close = SqlLexer.skipToCode(s, text, open + 1, to);
                return close >= to || s.at(text, close) != ')' ? SessionEffects.SETS_LAST_INSERT_ID
                        : SessionEffects.CALLS_LAST_INSERT_ID;
            case GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS:
                return lockFunction(word);
            case NEXTVAL:
                return RouteWords.opensCall(s, text, i, to) ? SessionEffects.NEXT_SEQUENCE_VALUE : 0;
            case TEMPORARY:
                return SessionEffects.TEMPORARY;
            case SQL_CALC_FOUND_ROWS:
                return SessionEffects.CALC_FOUND_ROWS;
            case SESSION_TRACK_SYSTEM_VARIABLES:
                return SessionEffects.TRACKED_VARIABLES;
            default:
                return 0;
        }
    }

    /** One code token, for the route. */
    private <T> void route(Source<T> s, T text, Kind kind, Keyword word, int start, int i, int to) {
        int c = s.at(text, start);
        if (kind == Kind.PUNCTUATION && c == ';') {
            ended = true;
            return;
        }
        if (ended) {
            facts |= RouteFacts.MULTI;
        }
        boolean dotBefore = afterDot;
        afterDot = kind == Kind.PUNCTUATION && c == '.';
        boolean commaBefore = afterComma;
        afterComma = kind == Kind.PUNCTUATION && c == ',' && depth == 0;
        boolean adjacent = start == codeEnd && (codeKind == Kind.STRING || codeKind == Kind.WORD
                || codeKind == Kind.QUOTED_IDENTIFIER);
        codeEnd = i;
        codeKind = kind;
        if (kind == Kind.PUNCTUATION) {
            depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            return;
        }
        if (kind == Kind.VARIABLE) {
            // 'user'@'host' and user@host name accounts (GRANT, CREATE USER): no variable there
            facts |= adjacent && s.at(text, start + 1) != '@' ? 0 : RouteWords.variable(s, text, start, i, to);
            return;
        }
        if (words > 0 && namesHidden) {
            facts |= RouteFacts.SIDE_EFFECT; // to the primary: a trigger's or a view's code may write (decision 200)
        }
        if (kind == Kind.QUOTED_IDENTIFIER) {
            if (words > 0 && RouteWords.opensCall(s, text, i, to) && !cteName(commaBefore)) {
                facts |= RouteWords.quotedCall(s, text, start, i, to, dotBefore, depth);
            }
            return;
        }
        if (kind != Kind.WORD) {
            return;
        }
        words++;
        if (words == 1) {
            first = word;
        } else if (words == 2) {
            second = word;
        } else if (words == 3) {
            third = word;
        }
        if (words > 1 && RouteWords.opensCall(s, text, i, to) && (dotBefore || !Functions.isReadOnly(s, text, start, i)
                && !cteName(commaBefore))) {
            // db.f(...), or f(...) with f no read-only built-in: a stored function, which may write (decision 110)
            facts |= RouteFacts.SIDE_EFFECT;
        }
        if (word == null) {
            previous = null;
            return;
        }
        if (first == Keyword.SET && second == Keyword.STATEMENT && word == Keyword.FOR && depth == 0 && words > 2) {
            // MariaDB's SET STATEMENT var = value FOR statement: the statement after FOR decides; what came before
            // (hints, the access mode) applies to it.
            outerFacts = (outerFacts < 0 ? 0 : outerFacts) | facts;
            facts = 0;
            first = null;
            second = null;
            third = null;
            resetRoute();
            return;
        }
        facts |= words == 1 ? 0 : RouteWords.word(s, text, word, previous, i, to, depth);
        previous = word;
    }

    /** Whether the token (a word, or a name in back quotes) is a name of {@link #hidden}'s. */
    private <T> boolean namesHiddenCode(Source<T> s, T text, Kind kind, int start, int end) {
        if (hidden.isEmpty()) {
            return false;
        }
        return kind == Kind.WORD ? hidden.contains(s, text, start, end)
                : kind == Kind.QUOTED_IDENTIFIER && end - start > 2 && hidden.contains(s, text, start + 1, end - 1);
    }

    /** Whether a word before {@code (} names a common table expression: {@code WITH [RECURSIVE] c (n) AS (...)}. */
    private boolean cteName(boolean commaBefore) {
        return first == Keyword.WITH && depth == 0
                && (previous == Keyword.WITH || previous == Keyword.RECURSIVE || commaBefore);
    }

    /**
     * Whether the word is followed by a table's name that may have a column list after it: INSERT [INTO] t (...),
     * REPLACE INTO t (...), LOAD DATA ... INTO TABLE t (...), REFERENCES t (...), WITH [RECURSIVE] cte (...).
     */
    private static boolean namesTableNext(Keyword word) {
        switch (word) {
            case INTO, TABLE, INSERT, REPLACE, REFERENCES, WITH, RECURSIVE:
                return true;
            default:
                return false;
        }
    }

    /** Whether, in a stored program's body, the word is followed by a statement. */
    private static boolean startsBodyStatement(Keyword word) {
        return word == Keyword.BEGIN || word == Keyword.THEN || word == Keyword.ELSE || word == Keyword.DO
                || word == Keyword.LOOP || word == Keyword.REPEAT;
    }

    /** CREATE, ALTER, DROP...: a routine's or a view's body is defined there, not run. */
    private static boolean isDdl(Keyword firstWord) {
        if (firstWord == null) {
            return false;
        }
        switch (firstWord) {
            case CREATE, ALTER, DROP, RENAME, GRANT, REVOKE, TRUNCATE:
                return true;
            default:
                return false;
        }
    }

    /** Whether the name (a word, or one in back quotes) is a built-in function's or a keyword's. */
    private static <T> boolean builtIn(Source<T> s, T text, int start, int end, Kind kind) {
        return kind == Kind.WORD ? Functions.isBuiltIn(s, text, start, end)
                : end - start > 2 && Functions.isBuiltIn(s, text, start + 1, end - 1);
    }

    private static int lockFunction(Keyword word) {
        return word == Keyword.GET_LOCK ? SessionEffects.GET_LOCK
                : word == Keyword.RELEASE_LOCK ? SessionEffects.RELEASE_LOCK
                : word == Keyword.RELEASE_ALL_LOCKS ? SessionEffects.RELEASE_ALL_LOCKS : 0;
    }

    /** Whether the word (a variable's name) is one of the variables only the next statement uses. */
    private static boolean statementVariable(Keyword word) {
        return word == Keyword.INSERT_ID || word == Keyword.IDENTITY || word == Keyword.LAST_INSERT_ID
                || word == Keyword.RAND_SEED1 || word == Keyword.RAND_SEED2;
    }

    /** Whether the code after {@code i} is {@code ()}: a call without arguments. */
    private static <T> boolean emptyCall(Source<T> s, T text, int i, int to) {
        int open = SqlLexer.skipToCode(s, text, i, to);
        if (open >= to || s.at(text, open) != '(') {
            return false;
        }
        int close = SqlLexer.skipToCode(s, text, open + 1, to);
        return close < to && s.at(text, close) == ')';
    }
}
