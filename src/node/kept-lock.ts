/** The kept store's lock: one process at a time appends to a journal. */
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { writeAll } from './kept-files.js';

/**
 * Takes `${path}.lock` for this process: two processes appending to one journal would each
 * lose what the other wrote. A lock left by a process that is gone is taken over.
 */
export function lock(path: string): () => void {
  const file = `${path}.lock`;
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeAll(fd, Buffer.from(String(process.pid)));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(readFileSync(file, 'utf8'));
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
      throw new Error(`it is in use by another process (${owner}); stop it first (or remove ${file} if no such process is a server)`);
    }
    rmSync(file, { force: true });
  }
}

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
