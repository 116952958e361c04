/**
 * A 208-byte corrupted zstd frame on which fzstd 0.1.1 (the decoder before
 * libzstd, decision 0062) looped forever: the
 * FSE table of its Huffman weights leaves both decoding states on zero-bit
 * transitions, so the weight loop never reaches the end of its bit stream.
 * Found by the fuzz suite (a mutated real frame). Decoding it must end in
 * `corrupt-zstd`, never in a hang.
 */
export const LOOPING_ZSTD_BASE64 =
  'KLUv/WRsABUGAFKMIxnxdw6D6vRAtY12OioAohT8xc8DIgAKTgRArcqZuy93h0/2VCHckOw7vkfsHwVqredKir53b59xnPLusCGOQWfcO3HTu7efldXf9rBhwZHsu2JPMb37My2HEXrCppJSCNS3d3piZEqyYcMQx7tnDPs+Ioo35AoTvo8Yc/chiPJu2Iqvu09JUsr0e55I/hYTAHmMc2ODhd1wNXkVhhVhw0i47FQy0RHNYTkBT8ByDNb1ieOkoTS4/Vzs95lF29IEs97DYA==';

/** The frame's bytes (a fresh copy per call). */
export function loopingZstd(): Uint8Array {
  return new Uint8Array(Buffer.from(LOOPING_ZSTD_BASE64, 'base64'));
}

/** Compressed offset of the frame's first (looping) block header: 4 magic bytes, a 1-byte descriptor, a 2-byte content size. */
export const LOOPING_BLOCK_OFFSET = 7;

/**
 * Mutated zstd samples of the fuzz suite (`test/hardening/fuzz.prop.test.ts`,
 * seeds 1, 2 and 5) on which fzstd looped whatever the chunking, base64:
 * inputs that used to hang the suite, kept so that every run meets some,
 * whatever its seed.
 */
export const FUZZ_LOOPING_INPUTS: readonly string[] = [
  'KLUv/SRmdQIA3cQPEZB9FJw9II16ZokEgjwzlpwlYJPjzs5PUT6r2sNnHogpxy1ib9VTPPw4w8uDF8Geh3LoXw8e5av1qx//ma3rBAC4/Vzs95lF29IEaOA5Hii1L/1kQQAVBQAyyh0YgG0OIBBtKXXBg0ahvjWRFQt58aIOUxhAjGccP6/IwsdfR/xLnka+n683b7/O4PNuIQhNGrM6wirDd1OQoFH3nK8zqgypuudX3SK9hRibtJ+HCM0KI10gxiFf5Vs39zUULK/O0l9DPlL+em9rFp6F/bxCVL8KEAAqAUbLQIzSNrsDEsgDg0ESbxBJDrxs0wxgCKSriaKQUKWqe76BJ2ZUhtc=',
  'KLUv/SRmdQIAvcQPEZB9FJw9II16ZokEgjwzlpy5JWCT487OT1E+q9rDZx6IKcctYm/VUzz8OMPLgxfBnody6F8PHuWr9asf/5mt6wQAuP1c7PeZRdvSBGjgOR4otS/9ZEEAFQUAMsodGIBtDiAQbSl1wYNGob41kRULefGiDhZTGECMZxw/r8jCx19H/EueRr6frzdvv87g824hCIwaszrCKsN3U5CgUfecrzOqDKm651fdIr2FGJu0n4cIzQojXSDGIV/lWzf3NRQsr87SX0M+Uv56b2sWnoX9vEJUvwoQACoBRstAjNI2uwMSyAODQRJvEEkOvGzTDGAIpKuJopBQpap7voEnZlSG1w==',
  'KLUv/WRsABUGAFKMIxnwdw6DGur0QLWNdjoqAKIU/MXPA4sACk4EQK3Kmbsvd4dP9lQh3JDsO75H7B8Faq3nSoq+d2+fcZzy7rAhjkFn3Dtx07u3n5XV3/awYcGR7LtiTzG9+zMthxF6wqaSUgjUt3d6YmRKsmHDEMe7Zwz7PiI35AoTvo8Yc/chiPJu2Iqvu09JUsr0e560/hYTAHmMc2ODhd1wNXkVhhVhw0i47FQy0RHNYTkBT8ByDNb1ieOkoTS4/Vzs95lF29IEs97DYA==',
  'KLUv/WRsABUGAFKMIxnxdw6D6vRAtY12OioAohT8xc8DIgAKTgRArcqZuy93h0/2VCHckOw7vkfsHwVqredKir53b59xnPLusCGOQWfcO3HTu7efldXf9rBhwZHsu2JPMb37My2HEXrCppJSCNS3d3piZEqyYcMQx7tnDPs+Ioo35AoTvo8Yc/chiPJu2Iqvu09JUsr0e55I/hYTAHmMc2ODhd1wNXkVhhVhw0i47FQy0RHNYTkBT8ByDNb1ieOkoTS4/Vzs95lF29IEs97DYA==',
  'KLUv/WRsABUGAFKMIxnxdw6DGur0QLWNdjoqAKIU/MXPAyIACk4EQK3Kmbsvd4dP9lQh3JDsO75H7B8Faq3nSoq+d2+fcZzy7rAhjkFn3Dtx07u3n5XV3/ZhwZHsu2JPMb37My2HEXrCppJSCNS3d3piZEqyYcMQx7tnDPs+IjfkChO+jxhz9yGI8m7Yiq+7T0lSyvR7nrT+FhMAeYxzY4OF3XA1eRWGFWHDSLjsVDLREc1hOQFPwHIM1vWJ46ShNLj9XOz3mUXb0gSz3sNg',
  'KLUv/WRsABUGAFKMIxnxdw6DGur0QLWNdjoqAKIU/MXPAyIACk4EQK3Kmbsvd4dP9lQh3JDsO75H7B8Faq3nSoq+d2+fcZzy7rAhjkFn3Dtx07u3n5XV3/awYcGR7LtiTzG9+zMthxF6wqaSUgjUt3d6YmRKsmHDEMe7Zwz7PiI35AoTvo8Yc/chiPJu2Iqvu09JUsr0e560/hYTAHmMc4OF3XA1eRWGFWHDSLjsVDLREc1hOQFPwHIM1vWJ46ShNLj9XOz3mUXb0gSz3sNg',
];
