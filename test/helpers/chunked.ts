/**
 * Cuts a byte stream into chunks at given offsets, as pipes deliver it in
 * pieces, for tests whose result must not depend on where the cuts fall.
 */
/**
 * @param cuts any non-negative numbers; each is taken modulo `input.length + 1` (duplicates merge).
 * @returns views of `input` (of its own type: a `Buffer` gives `Buffer`s) whose
 *   concatenation is `input`, possibly with empty ones at the ends.
 */
export function chunked<T extends Uint8Array>(input: T, cuts: readonly number[]): T[] {
  const offsets = [...new Set(cuts.map((cut) => cut % (input.length + 1)))].sort((a, b) => a - b);
  const chunks: T[] = [];
  let start = 0;
  for (const offset of [...offsets, input.length]) {
    chunks.push(input.subarray(start, offset) as T);
    start = offset;
  }
  return chunks;
}
