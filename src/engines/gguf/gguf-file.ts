// The GGUF v3 container (docs/rules/engines.md "A generated model"): a header, typed metadata
// key/values, tensor descriptions, then the tensor data, each piece aligned. Only what the
// generator writes is here: scalars, strings, arrays of them, F32 and F16 tensors. Little-endian
// throughout, as llama.cpp reads it.
import { closeSync, openSync, writeSync } from "node:fs";

/** GGUF metadata value types (the format's numbering). */
const T = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;

/** ggml tensor types (the format's numbering). */
export const GGML_F32 = 0;
export const GGML_F16 = 1;

export type MetaValue =
  | { u32: number }
  | { i32: number }
  | { f32: number }
  | { bool: boolean }
  | { string: string }
  | { strings: readonly string[] }
  | { f32s: Float32Array }
  | { i32s: Int32Array };

export interface TensorSpec {
  name: string;
  /** Dimensions, innermost first (ggml's ne[0] is the row length). */
  dims: readonly number[];
  type: typeof GGML_F32 | typeof GGML_F16;
  /** Writes the tensor's elements, row by row, as float32 (converted to F16 when asked). */
  fill: (out: Float32Array) => void;
}

const ALIGN = 32;
const enc = new TextEncoder();

/** A growable little-endian byte buffer for the header part. */
class Bytes {
  private buf = Buffer.alloc(1 << 16);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  private put(n: number, write: (buf: Buffer, at: number) => void): void {
    this.room(n);
    write(this.buf, this.length);
    this.length += n;
  }
  u32(v: number): void {
    this.put(4, (b, at) => b.writeUInt32LE(v, at));
  }
  i32(v: number): void {
    this.put(4, (b, at) => b.writeInt32LE(v, at));
  }
  u64(v: number): void {
    this.put(8, (b, at) => b.writeBigUInt64LE(BigInt(v), at));
  }
  f32(v: number): void {
    this.put(4, (b, at) => b.writeFloatLE(v, at));
  }
  u8(v: number): void {
    this.put(1, (b, at) => b.writeUInt8(v, at));
  }
  str(s: string): void {
    const b = enc.encode(s);
    this.u64(b.length);
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  pad(align: number): void {
    const n = (align - (this.length % align)) % align;
    this.room(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

function writeValue(b: Bytes, v: MetaValue): void {
  if ("u32" in v) {
    b.u32(T.u32);
    b.u32(v.u32);
  } else if ("i32" in v) {
    b.u32(T.i32);
    b.i32(v.i32);
  } else if ("f32" in v) {
    b.u32(T.f32);
    b.f32(v.f32);
  } else if ("bool" in v) {
    b.u32(T.bool);
    b.u8(v.bool ? 1 : 0);
  } else if ("string" in v) {
    b.u32(T.string);
    b.str(v.string);
  } else writeArray(b, v);
}

function writeArray(
  b: Bytes,
  v: Extract<MetaValue, { strings: unknown } | { f32s: unknown } | { i32s: unknown }>,
): void {
  b.u32(T.array);
  if ("strings" in v) {
    b.u32(T.string);
    b.u64(v.strings.length);
    for (const s of v.strings) b.str(s);
  } else if ("f32s" in v) {
    b.u32(T.f32);
    b.u64(v.f32s.length);
    for (const x of v.f32s) b.f32(x);
  } else {
    b.u32(T.i32);
    b.u64(v.i32s.length);
    for (const x of v.i32s) b.i32(x);
  }
}

function elements(t: TensorSpec): number {
  return t.dims.reduce((a, d) => a * d, 1);
}

function byteSize(t: TensorSpec): number {
  return elements(t) * (t.type === GGML_F16 ? 2 : 4);
}

/** Writes a GGUF v3 file; returns its size in bytes. */
export function writeGguf(
  file: string,
  meta: ReadonlyMap<string, MetaValue>,
  tensors: readonly TensorSpec[],
): number {
  const h = new Bytes();
  h.u32(0x46554747); // "GGUF"
  h.u32(3);
  h.u64(tensors.length);
  h.u64(meta.size);
  for (const [k, v] of meta) {
    h.str(k);
    writeValue(h, v);
  }
  let offset = 0;
  for (const t of tensors) {
    h.str(t.name);
    h.u32(t.dims.length);
    for (const d of t.dims) h.u64(d);
    h.u32(t.type);
    h.u64(offset);
    offset += byteSize(t);
    offset += (ALIGN - (offset % ALIGN)) % ALIGN;
  }
  h.pad(ALIGN);
  const fd = openSync(file, "w");
  try {
    let size = writeSync(fd, h.bytes());
    const zeros = Buffer.alloc(ALIGN);
    for (const t of tensors) {
      const values = new Float32Array(elements(t));
      t.fill(values);
      const data = t.type === GGML_F16 ? toF16(values) : Buffer.from(values.buffer);
      size += writeSync(fd, data);
      const pad = (ALIGN - (data.length % ALIGN)) % ALIGN;
      if (pad > 0) size += writeSync(fd, zeros, 0, pad);
    }
    return size;
  } finally {
    closeSync(fd);
  }
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** `v >>> shift`, rounded to nearest, ties to even. */
function shiftRound(v: number, shift: number): number {
  const q = v >>> shift;
  const rest = v & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  return rest > half || (rest === half && (q & 1) === 1) ? q + 1 : q;
}

/** IEEE 754 half precision, rounded to nearest even (weights here are small and finite). */
export function toF16(values: Float32Array): Buffer {
  const out = Buffer.alloc(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    f32[0] = values[i]!;
    const x = u32[0]!;
    const sign = (x >>> 16) & 0x8000;
    const exp = ((x >>> 23) & 0xff) - 127 + 15;
    const mant = x & 0x7fffff;
    let h: number;
    // A rounding carry out of the mantissa moves into the exponent (or makes a subnormal the
    // smallest normal); past the largest finite value it reaches infinity, 0x7c00.
    if (exp >= 31) h = sign | 0x7c00;
    else if (exp > 0) h = sign | Math.min(0x7c00, (exp << 10) + shiftRound(mant, 13));
    else if (exp >= -10) h = sign | shiftRound(mant | 0x800000, 14 - exp);
    else h = sign;
    out.writeUInt16LE(h, i * 2);
  }
  return out;
}
