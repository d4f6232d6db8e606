// The KubemootErrors both KV implementations throw, so callers branch on `code` alone.
import { ErrorCode, KubemootError } from "../errors/index.js";

export function stateUnavailable(message: string, cause?: unknown): KubemootError {
  return new KubemootError(ErrorCode.StateUnavailable, `NATS unavailable: ${message}`, { cause });
}

export function stateConflict(bucket: string, key: string, cause?: unknown): KubemootError {
  return new KubemootError(ErrorCode.StateConflict, `${bucket}/${key}: revision changed`, { cause });
}

export function stateExists(bucket: string, key: string, cause?: unknown): KubemootError {
  return new KubemootError(ErrorCode.StateExists, `${bucket}/${key}: already exists`, { cause });
}

export function valueTooLarge(bucket: string, key: string, bytes?: number, max?: number): KubemootError {
  const size = bytes === undefined ? "value" : `value of ${bytes} bytes`;
  const limit = max === undefined ? "the bucket's maximum" : `the bucket's maximum of ${max}`;
  return new KubemootError(ErrorCode.InvalidArgument, `${bucket}/${key}: ${size} exceeds ${limit}`, {
    field: "value",
  });
}

export function invalidKey(bucket: string, key: string): KubemootError {
  return new KubemootError(ErrorCode.InvalidArgument, `${bucket}: invalid key "${key}"`, { field: "key" });
}

/** Keys JetStream accepts: letters, digits, `-`, `_`, `/`, `=`, and `.` between tokens. */
export function validKey(key: string): boolean {
  return /^[-/=.\w]+$/.test(key) && !key.startsWith(".") && !key.endsWith(".") && !key.includes("..");
}
