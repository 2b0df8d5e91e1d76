#!/usr/bin/env node
// pieces-os-worker init <public dir> [--save]: copies the worker script into the folder an app serves statically.
// pieces-os-worker serve [--port 39300] [--host 127.0.0.1] [--data file.json] [--log] [--mirror <url>|auto]
// [bounds]: the service on a loopback port.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const SCRIPT = 'pieces-os-worker.js';
const dist = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist');
const [command, ...rest] = process.argv.slice(2);

const USAGE = `Usage:
  pieces-os-worker init <public dir> [--save]
      Copies ${SCRIPT} into <public dir>, the folder your app serves at its root
      (public/ for Vite, Next.js and Create React App), so that
      startPiecesService() can register it at /${SCRIPT}.
      --save remembers the folder in package.json ("pieces-os-worker": {"workerDirectory": [...]}),
      so that every npm install of pieces-os-worker copies the script there again.
      With Vite, the plugin needs no copy: import { piecesOsWorker } from 'pieces-os-worker/vite'.

  pieces-os-worker serve [--port 39300] [--host 127.0.0.1] [--data file.json] [--log] [--no-sample-assets]
                         [--allowed-hosts name,…] [--allowed-origins origin,…] [--mirror <url>|auto]
                         [--max-connections 256] [--headers-timeout 10000] [--request-timeout 30000]
                         [--idle-timeout 120000] [--max-body-bytes-in-flight 67108864] [--max-questions-in-flight 8]
      Answers the Pieces OS API on http://<host>:<port> (HTTP and WebSocket) from memory.
      --data loads that file (the exportData() format) at start, if it exists, and writes
      the store back to it on exit (Ctrl+C, SIGTERM), never in place. Every write is kept
      before it is answered in the store beside it (file.store, file.store-journal), so
      that kill -9 loses nothing answered; the next start reads it.
      Requests must name the server in Host (its address, localhost or an IP address):
      --allowed-hosts adds names (.example.test for its subdomains; 'all' for any).
      Web pages are answered only from loopback origins (http://localhost:*, http://127.0.0.1:*,
      http://[::1]:*): --allowed-origins adds origins (https://app.example). The controls under
      /__pieces/ need the header X-Pieces-Control and refuse every web page not listed there.
      Bounds on what one client may hold (times in ms, 0 for none): --max-connections (HTTP and
      WebSocket), --headers-timeout and --request-timeout (then 408), --idle-timeout (a connection
      where nothing moves), --max-body-bytes-in-flight (then 503), --max-questions-in-flight
      (per copilot socket; then a FAILED frame, statusCode 429).
      --mirror mirrors a real Pieces OS at that URL (auto: found on localhost as clients find it):
      requests go to it while it answers, are answered here and queued while it does not.
      Its state: GET /__pieces/mirror (a control: with X-Pieces-Control).`;

/** The bound flags of serve, and the LoopbackOptions each sets. */
const BOUNDS = {
  'max-connections': 'maxConnections',
  'headers-timeout': 'headersTimeout',
  'request-timeout': 'requestTimeout',
  'idle-timeout': 'idleTimeout',
  'max-body-bytes-in-flight': 'maxBodyBytesInFlight',
  'max-questions-in-flight': 'maxQuestionsInFlight',
};

function fail(message) {
  console.error(`pieces-os-worker: ${message}\n\n${USAGE}`);
  process.exit(1);
}

if (command === '--help' || command === '-h' || command === 'help') {
  console.log(USAGE);
} else if (command === 'init') {
  init(rest.filter((arg) => arg !== '--save')[0], rest.includes('--save'));
} else if (command === 'serve') {
  await serve(rest);
} else {
  fail(command ? `unknown command "${command}".` : 'a command is needed.');
}

function init(folder, save) {
  if (!folder) fail('init needs the folder your app serves statically.');
  const source = join(dist, SCRIPT);
  if (!existsSync(source)) {
    console.error(`pieces-os-worker: ${source} is missing; build the package first (npm run build).`);
    process.exit(1);
  }
  const target = resolve(folder);
  mkdirSync(target, { recursive: true });
  copyFileSync(source, join(target, SCRIPT));
  console.log(`pieces-os-worker: copied ${SCRIPT} to ${relative(process.cwd(), join(target, SCRIPT)) || SCRIPT}`);
  if (save) saveFolder(target);
  console.log(`Register it in your app:

  import { startPiecesService } from 'pieces-os-worker';
  await startPiecesService();`);
}

/** Remembers `target` in the app's package.json; the package's postinstall refreshes the copy there. */
function saveFolder(target) {
  const manifest = resolve('package.json');
  if (!existsSync(manifest)) fail("--save: no package.json in this folder; run init from your app's root.");
  const text = readFileSync(manifest, 'utf8');
  const json = JSON.parse(text);
  const entry = relative(process.cwd(), target).split('\\').join('/') || '.';
  const config = (json['pieces-os-worker'] ??= {});
  config.workerDirectory = [...new Set([...(config.workerDirectory ?? []), entry])];
  const indent = text.match(/^(\s+)"/m)?.[1] ?? '  ';
  writeFileSync(manifest, JSON.stringify(json, null, indent) + (text.endsWith('\n') ? '\n' : ''));
  console.log(`[pieces-os-worker] saved "${entry}" in package.json: every install of pieces-os-worker refreshes the copy.`);
}

async function serve(args) {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: 'string', default: '39300' },
        host: { type: 'string', default: '127.0.0.1' },
        data: { type: 'string' },
        log: { type: 'boolean', default: false },
        'no-sample-assets': { type: 'boolean', default: false },
        'allowed-hosts': { type: 'string', multiple: true },
        'allowed-origins': { type: 'string', multiple: true },
        mirror: { type: 'string' },
        ...Object.fromEntries(Object.keys(BOUNDS).map((flag) => [flag, { type: 'string' }])),
      },
    }));
  } catch (error) {
    fail(error.message);
  }
  const bounds = {};
  for (const [flag, option] of Object.entries(BOUNDS)) {
    if (values[flag] === undefined) continue;
    const value = Number(values[flag]);
    if (!/^\d+$/.test(values[flag]) || !Number.isSafeInteger(value) || (option === 'maxConnections' && value === 0)) {
      fail(`--${flag} must be a whole number${option === 'maxConnections' ? ' above 0' : ''}, not ${values[flag]}.`);
    }
    bounds[option] = value;
  }
  const port = Number(values.port);
  if (values.mirror !== undefined && values.mirror !== 'auto' && !/^https?:\/\/[^/]+/.test(values.mirror)) {
    fail(`--mirror must be a Pieces OS URL (http://localhost:39300) or auto, not ${values.mirror}.`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be a port number, not ${values.port}.`);
  const build = join(dist, 'node.js');
  if (!existsSync(build)) {
    console.error(`pieces-os-worker: ${build} is missing; build the package first (npm run build).`);
    process.exit(1);
  }
  const { startLoopbackServer } = await import(build);
  let server;
  try {
    const list = (values) =>
      (values ?? [])
        .flatMap((value) => value.split(','))
        .map((value) => value.trim())
        .filter(Boolean);
    const hosts = list(values['allowed-hosts']);
    server = await startLoopbackServer({
      port,
      host: values.host,
      dataFile: values.data,
      log: values.log,
      sampleAssets: !values['no-sample-assets'],
      allowedHosts: hosts.includes('all') ? true : hosts,
      allowedOrigins: list(values['allowed-origins']),
      ...(values.mirror ? { mirror: { upstream: values.mirror } } : {}),
      ...bounds,
    });
  } catch (error) {
    const reason = error.code === 'EADDRINUSE' ? `port ${port} is in use on ${values.host}.` : error.message;
    console.error(`pieces-os-worker: cannot serve: ${reason}`);
    process.exit(1);
  }
  console.log(
    `pieces-os-worker: answering ${server.url} (HTTP and WebSocket)${values.data ? `, data in ${values.data}` : ''}${values.mirror ? `, mirroring ${values.mirror}` : ''}; Ctrl+C to stop.`,
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      // Closing writes the store to --data (the writes themselves were kept as they were answered).
      await server.close();
      if (values.data) console.log(`pieces-os-worker: wrote the store to ${values.data}.`);
      process.exit(0);
    } catch (error) {
      console.error(`pieces-os-worker: could not write the store to ${values.data}: ${error.message}`);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}
