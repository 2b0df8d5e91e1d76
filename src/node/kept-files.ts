/** Durable writes of the kept store's files: whole, fsync'ed, and a file replaced never left torn. */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export function writeAll(fd: number, bytes: Buffer) {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** Makes a rename in `dir` durable (where directories can be opened: not on Windows). */
function syncDirectory(dir: string) {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not supported here; the rename itself is atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Writes `bytes` to `path` without ever leaving it torn: to `path.tmp`, fsync'ed, renamed over it. */
export async function replaceFile(path: string, chunks: Iterable<Buffer | string>): Promise<void> {
  const temporary = `${path}.tmp`;
  const file = await openFile(temporary, 'w');
  try {
    for (const chunk of chunks) await (typeof chunk === 'string' ? file.write(chunk) : file.write(chunk));
    await file.sync();
  } finally {
    await file.close();
  }
  renameSync(temporary, path);
  syncDirectory(dirname(path));
}

export function replaceFileSync(path: string, bytes: Buffer) {
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeAll(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  syncDirectory(dirname(path));
}
