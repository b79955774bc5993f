// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed pseudo-random function built for short
// messages, the MAC that signs cursors. A page mints one cursor per edge, and node:crypto's
// one-shot hash costs 1.5–2 µs a call here (the call into OpenSSL, not the hashing); this costs a
// fraction of that on a cursor's 40-odd bytes. JavaScript has no 64-bit integers that are fast, so
// each 64-bit word is two 32-bit halves, high and low, kept unsigned with `>>> 0`.

/** SipHash's four words after its key is mixed in: the state every message starts from. */
export type SipKey = Uint32Array;

/** The starting state for a 16-byte key (k0 and k1, little-endian), as SipHash's initialisation makes it. */
export function sipKey(key: Uint8Array): SipKey {
  if (key.length !== 16) throw new RangeError('a SipHash key is 16 bytes');
  const k0l = word(key, 0);
  const k0h = word(key, 4);
  const k1l = word(key, 8);
  const k1h = word(key, 12);
  // "somepseudorandomlygeneratedbytes", high half then low half of each word.
  return Uint32Array.of(
    (k0h ^ 0x736f6d65) >>> 0,
    (k0l ^ 0x70736575) >>> 0,
    (k1h ^ 0x646f7261) >>> 0,
    (k1l ^ 0x6e646f6d) >>> 0,
    (k0h ^ 0x6c796765) >>> 0,
    (k0l ^ 0x6e657261) >>> 0,
    (k1h ^ 0x74656462) >>> 0,
    (k1l ^ 0x79746573) >>> 0,
  );
}

function word(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

/**
 * SipHash-2-4 of `data[start, end)` under `key`, its 8 bytes written little-endian into `out` at
 * `outAt` (as the reference implementation writes them). Returns `outAt + 8`.
 */
export function sipHash24(key: SipKey, data: Uint8Array, start: number, end: number, out: Uint8Array, outAt: number): number {
  // The state, v0 to v3, each as its high and low halves.
  let v0h = key[0]!;
  let v0l = key[1]!;
  let v1h = key[2]!;
  let v1l = key[3]!;
  let v2h = key[4]!;
  let v2l = key[5]!;
  let v3h = key[6]!;
  let v3l = key[7]!;
  const length = end - start;
  const words = length >>> 3;
  // Each full word takes 2 rounds; then the last word (the leftover bytes and the length's low
  // byte) takes 2; then the finalisation, with 0xff in v2, takes 4 (its word is 0: no effect).
  for (let block = 0; block <= words + 1; block++) {
    let mh = 0;
    let ml = 0;
    let rounds = 2;
    if (block < words) {
      const at = start + 8 * block;
      ml = word(data, at);
      mh = word(data, at + 4);
    } else if (block === words) {
      const at = start + 8 * words;
      const left = length & 7;
      for (let i = 0; i < left; i++) {
        if (i < 4) ml |= data[at + i]! << (8 * i);
        else mh |= data[at + i]! << (8 * (i - 4));
      }
      ml >>>= 0;
      mh = (mh | ((length & 0xff) << 24)) >>> 0;
    } else {
      v2l = (v2l ^ 0xff) >>> 0;
      rounds = 4;
    }
    v3h = (v3h ^ mh) >>> 0;
    v3l = (v3l ^ ml) >>> 0;
    // Each SipRound written out over the eight halves in locals: a helper would have to hand back
    // two halves at a time, an allocation per step.
    for (let round = 0; round < rounds; round++) {
      let sum: number;
      let h: number;
      // v0 += v1; v1 = rotl(v1, 13) ^ v0; v0 = rotl(v0, 32)
      sum = v0l + v1l;
      v0h = (v0h + v1h + (sum > 0xffffffff ? 1 : 0)) >>> 0;
      v0l = sum >>> 0;
      h = (v1h << 13) | (v1l >>> 19);
      v1l = (((v1l << 13) | (v1h >>> 19)) ^ v0l) >>> 0;
      v1h = (h ^ v0h) >>> 0;
      h = v0h;
      v0h = v0l;
      v0l = h;
      // v2 += v3; v3 = rotl(v3, 16) ^ v2
      sum = v2l + v3l;
      v2h = (v2h + v3h + (sum > 0xffffffff ? 1 : 0)) >>> 0;
      v2l = sum >>> 0;
      h = (v3h << 16) | (v3l >>> 16);
      v3l = (((v3l << 16) | (v3h >>> 16)) ^ v2l) >>> 0;
      v3h = (h ^ v2h) >>> 0;
      // v0 += v3; v3 = rotl(v3, 21) ^ v0
      sum = v0l + v3l;
      v0h = (v0h + v3h + (sum > 0xffffffff ? 1 : 0)) >>> 0;
      v0l = sum >>> 0;
      h = (v3h << 21) | (v3l >>> 11);
      v3l = (((v3l << 21) | (v3h >>> 11)) ^ v0l) >>> 0;
      v3h = (h ^ v0h) >>> 0;
      // v2 += v1; v1 = rotl(v1, 17) ^ v2; v2 = rotl(v2, 32)
      sum = v2l + v1l;
      v2h = (v2h + v1h + (sum > 0xffffffff ? 1 : 0)) >>> 0;
      v2l = sum >>> 0;
      h = (v1h << 17) | (v1l >>> 15);
      v1l = (((v1l << 17) | (v1h >>> 15)) ^ v2l) >>> 0;
      v1h = (h ^ v2h) >>> 0;
      h = v2h;
      v2h = v2l;
      v2l = h;
    }
    v0h = (v0h ^ mh) >>> 0;
    v0l = (v0l ^ ml) >>> 0;
  }
  const lo = (v0l ^ v1l ^ v2l ^ v3l) >>> 0;
  const hi = (v0h ^ v1h ^ v2h ^ v3h) >>> 0;
  for (let i = 0; i < 4; i++) {
    out[outAt + i] = (lo >>> (8 * i)) & 0xff;
    out[outAt + 4 + i] = (hi >>> (8 * i)) & 0xff;
  }
  return outAt + 8;
}
