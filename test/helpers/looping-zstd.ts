/**
 * A 208-byte corrupted zstd frame on which fzstd 0.1.1 loops forever: the
 * FSE table of its Huffman weights leaves both decoding states on zero-bit
 * transitions, so the weight loop never reaches the end of its bit stream.
 * Found by the fuzz suite (a mutated real frame). Decoding it must end in a
 * `stalled` failure, never in a hang.
 */
export const LOOPING_ZSTD_BASE64 =
  'KLUv/WRsABUGAFKMIxnxdw6D6vRAtY12OioAohT8xc8DIgAKTgRArcqZuy93h0/2VCHckOw7vkfsHwVqredKir53b59xnPLusCGOQWfcO3HTu7efldXf9rBhwZHsu2JPMb37My2HEXrCppJSCNS3d3piZEqyYcMQx7tnDPs+Ioo35AoTvo8Yc/chiPJu2Iqvu09JUsr0e55I/hYTAHmMc2ODhd1wNXkVhhVhw0i47FQy0RHNYTkBT8ByDNb1ieOkoTS4/Vzs95lF29IEs97DYA==';

/** The frame's bytes (a fresh copy per call). */
export function loopingZstd(): Uint8Array {
  return new Uint8Array(Buffer.from(LOOPING_ZSTD_BASE64, 'base64'));
}

/** Compressed offset of the frame's first (looping) block header: 4 magic bytes, a 1-byte descriptor, a 2-byte content size. */
export const LOOPING_BLOCK_OFFSET = 7;
