package io.sluice.statistics;

import io.netty.buffer.ByteBuf;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.sql.SqlDigest;
import io.sluice.sql.SqlLexer;

/**
 * A 64-bit hash of a statement's shape, read from its bytes without allocating: the same for two statements whenever
 * {@link SqlDigest} gives them the same text from the same tokens, so that the command path finds a statement's digest
 * by this hash, and computes the digest text only the first time a shape is seen. It follows the digest's normal form
 * token by token: literals and {@code ?} are one mark, a sign before a literal is part of it, {@code NULL} but in
 * {@code IS [NOT] NULL} is a literal, words and variables are folded to lower case (ASCII), quoted names are kept as
 * written, comments and white space are left out, a list of literals whose length varies is one mark, and rows of such
 * lists that follow each other are one. Where the two could differ (a non-ASCII letter's case, a text over the
 * digest's 1024 characters) the hash tells more shapes apart than the digest, never fewer: two entries of one digest
 * are merged when read.
 *
 * <p>One instance per event loop, reused from statement to statement (its fields are the walk's state), so that
 * nothing is allocated. Only the first {@link #MAX_BYTES} bytes are read, and the digest is made from the same bytes, so the two always
 * agree; a list of literals cut there is closed, as {@link SqlDigest} closes one.
 */
public final class StatementShape {

    /** The most bytes of a statement read, for the hash and for its digest. */
    public static final int MAX_BYTES = 4096;

    private static final long PRIME = 0x100000001b3L;
    private static final long SEED = 0xcbf29ce484222325L;
    private static final long LITERAL = 0x9e3779b97f4a7c15L;
    private static final long FOLDED = 0xc2b2ae3d27d4eb4fL;
    private static final long WORD = 0x165667b19e3779f9L;
    private static final long NAME = 0x27d4eb2f165667c5L;
    private static final long SIGN = 0x85ebca77c2b2ae63L;

    /** What was hashed last, as the digest tells a sign from a subtraction and a list from other parentheses. */
    private static final int NONE = 0;
    private static final int VALUE = 1;
    private static final int WORDISH = 2;
    private static final int CLOSE = 3;
    private static final int OTHER = 4;

    /** The shape of the statement in {@code buf} from {@code from} to {@code to} (borrowed; indexes unmoved). */
    public long of(ByteBuf buf, int from, int to) {
        hash = SEED;
        previous = NONE;
        afterIsOrNot = false;
        afterListWord = false;
        afterComma = false;
        sign = 0;
        inList = false;
        commaHeld = false;
        foldedThenComma = false;
        rowAfterFolded = false;
        justFolded = false;
        return run(buf, from, Math.min(to, from + MAX_BYTES));
    }

    /** The bytes {@link #of} reads of a statement {@code length} bytes long. */
    public static int readLength(int length) {
        return Math.min(length, MAX_BYTES);
    }

    // The walk's state, reused from statement to statement: one instance per event loop, never shared.
    private long hash = SEED;
    private int previous = NONE;
    /** The previous token was the word {@code is} or {@code not}: a {@code null} after it is a word. */
    private boolean afterIsOrNot;
    /** The previous token was {@code in}, {@code value} or {@code values}: a list of literals after it folds. */
    private boolean afterListWord;
    /** The previous token was a comma: a list of literals after it folds (a row). */
    private boolean afterComma;
    /** A {@code -} or {@code +} held back: a literal's sign, or an operator once something else follows. */
    private int sign;
    // The innermost parenthesis, while only literals and commas follow it.
    private boolean inList;
    private long hashBeforeOpen;
    private int literals;
    private boolean openFolds;
    /** In a list, a comma after its second literal, not hashed yet: more literals would make it vanish. */
    private boolean commaHeld;
    /** The hash right after a folded list: a folded row after it and a comma merges into it. */
    private long hashAfterFolded;
    /** A folded list, then a comma, came last. */
    private boolean foldedThenComma;
    /** The list open now follows a folded list and a comma. */
    private boolean rowAfterFolded;
    private boolean justFolded;

    private long run(ByteBuf buf, int from, int to) {
        for (int i = from; i < to; ) {
            long token = SqlLexer.next(StatementClassifier.BYTES, buf, i, to);
            int end = SqlLexer.end(token);
            switch (SqlLexer.kind(token)) {
                case STRING, NUMBER -> literal();
                case WORD -> word(buf, i, end);
                case VARIABLE -> name(buf, i, end, true);
                case QUOTED_IDENTIFIER -> name(buf, i, end, false);
                case PUNCTUATION -> punctuation(buf, i, end);
                default -> {
                    // white space, comments and executable comments' marks: not part of the shape
                }
            }
            i = end;
        }
        if (inList && sign == 0 && literals > 0 && folds()) {
            fold(); // a list cut short reads as if closed, as the digest closes it
        }
        writeSign();
        return hash;
    }

    private void literal() {
        sign = 0; // a sign before a literal is part of its value
        if (inList) {
            literals++;
            if (literals > 2) {
                commaHeld = false; // (?, ? stands for a list of any length: the comma before this one goes
                set(VALUE);
                return;
            }
        } else {
            other();
        }
        mix(LITERAL);
        set(VALUE);
    }

    private void word(ByteBuf buf, int start, int end) {
        if (!afterIsOrNot && SqlLexer.is(StatementClassifier.BYTES, buf, start, end, "NULL")) {
            literal();
            return;
        }
        boolean isOrNot = SqlLexer.is(StatementClassifier.BYTES, buf, start, end, "IS")
                || SqlLexer.is(StatementClassifier.BYTES, buf, start, end, "NOT");
        boolean listWord = SqlLexer.is(StatementClassifier.BYTES, buf, start, end, "IN")
                || SqlLexer.is(StatementClassifier.BYTES, buf, start, end, "VALUES")
                || SqlLexer.is(StatementClassifier.BYTES, buf, start, end, "VALUE");
        other();
        mix(WORD);
        for (int i = start; i < end; i++) {
            mix(lower(buf, i));
        }
        set(WORDISH);
        afterIsOrNot = isOrNot;
        afterListWord = listWord;
    }

    private void name(ByteBuf buf, int start, int end, boolean folded) {
        other();
        mix(NAME);
        for (int i = start; i < end; i++) {
            mix(folded ? lower(buf, i) : buf.getUnsignedByte(i));
        }
        set(WORDISH);
    }

    private void punctuation(ByteBuf buf, int start, int end) {
        int c = buf.getUnsignedByte(start);
        if (end - start == 1) {
            switch (c) {
                case '?' -> {
                    literal();
                    return;
                }
                case '(' -> {
                    open();
                    return;
                }
                case ')' -> {
                    close();
                    return;
                }
                case ',' -> {
                    comma();
                    return;
                }
                case '-', '+' -> {
                    boolean afterValue = previous == VALUE || previous == WORDISH || previous == CLOSE;
                    if (!afterValue && sign == 0) {
                        sign = c;
                        return;
                    }
                }
                default -> {
                    // an operator
                }
            }
        }
        other();
        for (int i = start; i < end; i++) {
            mix(buf.getUnsignedByte(i));
        }
        set(OTHER);
    }

    private void open() {
        boolean folding = afterListWord || afterComma;
        boolean row = foldedThenComma;
        other();
        hashBeforeOpen = hash;
        mix('(');
        inList = true;
        literals = 0;
        commaHeld = false;
        openFolds = folding;
        rowAfterFolded = row;
        set(OTHER);
    }

    private void close() {
        writeSign();
        if (inList && literals > 0 && !afterComma && folds()) {
            fold();
            return;
        }
        other();
        mix(')');
        set(CLOSE);
    }

    private boolean folds() {
        return literals >= 2 || openFolds;
    }

    private void fold() {
        if (rowAfterFolded) {
            hash = hashAfterFolded; // a row like the one before it: the two read as one
        } else {
            hash = hashBeforeOpen;
            mix(FOLDED);
        }
        hashAfterFolded = hash;
        inList = false;
        commaHeld = false;
        rowAfterFolded = false;
        foldedThenComma = false;
        set(CLOSE);
        justFolded = true;
    }

    private void comma() {
        writeSign();
        if (inList && literals > 0 && !afterComma) {
            if (literals >= 2) {
                commaHeld = true; // hashed only if no literal follows
            } else {
                mix(',');
            }
            set(OTHER);
            afterComma = true;
            return;
        }
        boolean afterFolded = justFolded;
        other();
        mix(',');
        set(OTHER);
        afterComma = true;
        foldedThenComma = afterFolded;
    }

    /** Anything but a literal, a comma in a list, or a folding close: the list open, if any, is none. */
    private void other() {
        writeSign();
        if (inList) {
            if (commaHeld) {
                mix(',');
                commaHeld = false;
            }
            inList = false;
        }
        foldedThenComma = false;
        rowAfterFolded = false;
    }

    /** What was hashed last; every flag that says what came just before is cleared. */
    private void set(int kind) {
        previous = kind;
        afterIsOrNot = false;
        afterListWord = false;
        afterComma = false;
        justFolded = false;
    }

    /** A sign held back and not followed by a literal is an operator after all. */
    private void writeSign() {
        if (sign != 0) {
            int held = sign;
            sign = 0;
            other();
            mix(SIGN);
            mix(held);
            set(OTHER);
        }
    }

    private void mix(long value) {
        hash = (hash ^ value) * PRIME;
    }

    private static int lower(ByteBuf buf, int index) {
        int c = buf.getUnsignedByte(index);
        return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
    }
}
