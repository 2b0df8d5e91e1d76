/**
 * The bench's record of its runs: each bench file adds its section (its figures, each with its
 * median and the floor it is set against) to one file per run under `bench/results/`, committed
 * with the change it measured. `.bench/` keeps the last run's raw samples and tables besides.
 *
 * A run is one `vitest run --project bench`: the sections of its files go to the same file,
 * `bench/results/<YYYY-MM-DD>-<HHMM>-full.json` (UTC, when its first section ended). A smoke run
 * (`BENCH=smoke`) judges nothing and is not kept: its file goes to the git-ignored `.bench/results/`.
 * The files of a run are told apart by the vitest process that runs them (`BENCH_RUN` names a run
 * instead, to gather several invocations).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { median, p95 } from './stats.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
export const RESULTS = join(root, smoke ? '.bench/results' : 'bench/results');

export interface Figure {
  /** What was measured, as the report names it. */
  measure: string;
  unit: 'ms' | 'per second' | 'MiB' | 'KB' | '×';
  median: number;
  p95?: number;
  /** How many samples the median is of. */
  n?: number;
  /** What it is set against: a floor (the same work without the service), and its median. */
  floor?: { measure: string; median: number };
  /** Instead of a floor, another path of this service it is compared with (the generic path against a hand-written operation). */
  against?: { measure: string; median: number };
  /** The figure over its floor (or what it is `against`), as its target reads it (for rates: ours/floor of the rates). */
  ratio?: number;
  target?: string;
  /** Whether the target is met; null where the run does not judge it (a smoke run). */
  met?: boolean | null;
  /** What a figure converted from the docs lacks or holds besides (a range, a missing median). */
  note?: string;
}

export interface Section {
  /** When the section ended (ISO-8601). */
  at: string;
  plan: unknown;
  machine: Record<string, unknown>;
  figures: Figure[];
}

export interface RunFile {
  mode: 'full' | 'smoke';
  /** Which vitest run wrote it (see above); absent in a file converted from the docs. */
  runner?: string;
  /** Set when the figures were taken from the docs' tables rather than written by the bench. */
  converted?: string;
  sections: Record<string, Section>;
}

/** A figure from its samples: median, p95 and their number. */
export function sampled(
  measure: string,
  samples: number[],
  extra: Omit<Figure, 'measure' | 'median' | 'p95' | 'n' | 'unit'> & { unit?: Figure['unit'] } = {},
): Figure {
  return { measure, unit: 'ms', median: median(samples), p95: p95(samples), n: samples.length, ...extra };
}

/** What every section records of the machine (its load at the end of the section). */
export function machine(more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model,
    node: process.version,
    loadavg: loadavg().map((l) => Number(l.toFixed(2))),
    ...more,
  };
}

/** The vitest run this file runs in: its main process (the parent of a forked worker). */
function runner(): string {
  if (process.env.BENCH_RUN) return process.env.BENCH_RUN;
  return String(typeof process.send === 'function' ? process.ppid : process.pid);
}

/** Numbers to 4 significant digits; NaN and infinities (a figure a run did not get) as null, as JSON.stringify does. */
const json = (value: unknown) =>
  `${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Number(v.toPrecision(4)) : v), 2)}\n`;

/** Adds a section to its run's file (made when it is the run's first); returns the file's path. */
export function recordRun(name: string, section: Omit<Section, 'at'>, dir = RESULTS): string {
  const mode = smoke ? 'smoke' : 'full';
  const at = new Date();
  const id = runner();
  mkdirSync(dir, { recursive: true });
  const mine = readdirSync(dir)
    .filter((file) => file.endsWith(`-${mode}.json`))
    .sort()
    .reverse()
    .find((file) => {
      try {
        const run = JSON.parse(readFileSync(join(dir, file), 'utf8')) as RunFile;
        // A process id comes back in time: a run's sections follow each other within the hour.
        const last = Math.max(...Object.values(run.sections).map((section) => Date.parse(section.at)));
        return run.runner === id && !run.sections[name] && at.getTime() - last < 60 * 60_000;
      } catch {
        return false;
      }
    });
  const stem = `${at.toISOString().slice(0, 10)}-${at.toISOString().slice(11, 16).replace(':', '')}`;
  let file = mine ?? `${stem}-${mode}.json`;
  for (let k = 2; !mine && existsSync(join(dir, file)); k++) file = `${stem}-${k}-${mode}.json`;
  const path = join(dir, file);
  const run: RunFile = mine ? (JSON.parse(readFileSync(path, 'utf8')) as RunFile) : { mode, runner: id, sections: {} };
  run.sections[name] = { at: at.toISOString(), ...section };
  writeFileSync(path, json(run));
  console.info(`Recorded: ${relative(root, path)} (${name})`);
  return path;
}
