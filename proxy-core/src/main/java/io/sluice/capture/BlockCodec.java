package io.sluice.capture;

import static io.sluice.capture.CaptureFormat.BLOCK_HEADER_SIZE;
import static io.sluice.capture.CaptureFormat.HEADER_SIZE;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;

/**
 * Turns a block's records into the bytes stored in one capture file, and back: compressed then AES-GCM-sealed as
 * the file's header says, framed with length and CRC-32. Both directions are here so that the order of the steps
 * and the associated data are written once. One per file, since the associated data starts with the file's header.
 */
final class BlockCodec {
    private final CaptureHeader header;
    private final byte[] headerBytes;
    private final CaptureKey key;
    private final BlockCompressor compressor;

    /**
     * @param headerBytes {@code header} as the file holds it
     * @param key the key of an encrypted file, else {@code null}
     * @param compressor of the kind the header's flags name, {@code null} when they name none; borrowed, not closed
     */
    BlockCodec(CaptureHeader header, byte[] headerBytes, CaptureKey key, BlockCompressor compressor) {
        this.header = header;
        this.headerBytes = headerBytes;
        this.key = key;
        this.compressor = compressor;
    }

    /** The file's bytes for the block of index {@code blockIndex}: the frame, then the stored bytes. */
    byte[] seal(int blockIndex, byte[] content, int length) {
        byte[] stored = content;
        int storedLength = length;
        if (header.compressed()) {
            stored = compressor.compress(content, length);
            storedLength = stored.length;
        }
        if (header.encrypted()) {
            stored = key.seal(stored, storedLength, associatedData(blockIndex));
            storedLength = stored.length;
        }
        CRC32 crc = new CRC32();
        crc.update(stored, 0, storedLength);
        byte[] framed = new byte[BLOCK_HEADER_SIZE + storedLength];
        ByteBuffer.wrap(framed).order(ByteOrder.LITTLE_ENDIAN).putInt(storedLength).putInt((int) crc.getValue())
                .put(stored, 0, storedLength);
        return framed;
    }

    /**
     * The records of a stored block: what {@link #seal} was given.
     *
     * @param crc the CRC-32 the block's frame gives
     * @param file the file, for the message when the block is damaged
     * @param blockOffset where the block's frame starts in the file, likewise
     * @throws CaptureFormatException when the block fails its CRC, its authentication or its decompression
     */
    byte[] open(int blockIndex, int crc, byte[] stored, Path file, long blockOffset) throws CaptureFormatException {
        CRC32 actual = new CRC32();
        actual.update(stored);
        if ((int) actual.getValue() != crc) {
            throw new CaptureFormatException(file, blockOffset, "corrupted: block checksum mismatch");
        }
        byte[] content = stored;
        if (header.encrypted()) {
            try {
                content = key.open(stored, associatedData(blockIndex));
            } catch (GeneralSecurityException e) {
                throw new CaptureFormatException(file, blockOffset,
                        "corrupted: the block fails AES-GCM authentication (altered, or moved from elsewhere)", e);
            }
        }
        if (header.compressed()) {
            try {
                content = compressor.decompress(content);
            } catch (DataFormatException e) {
                throw new CaptureFormatException(file, blockOffset, "corrupted: " + e.getMessage(), e);
            }
        }
        return content;
    }

    /** The file's header and the block's index: a block cannot be moved to another place or file unnoticed. */
    private byte[] associatedData(int blockIndex) {
        byte[] aad = Arrays.copyOf(headerBytes, HEADER_SIZE + 4);
        ByteBuffer.wrap(aad).order(ByteOrder.LITTLE_ENDIAN).putInt(HEADER_SIZE, blockIndex);
        return aad;
    }
}
