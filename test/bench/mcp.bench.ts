/**
 * An MCP tool call through the loopback server against the same query through the REST API
 * (issue 34: "an MCP tool call through the loopback server ≤ 1.5× the same query through the REST
 * API"), in Node, over a real port:
 *
 * - MCP: `tools/call workstream_summaries_full_text_search {query}` with the official client over
 *   the streamable HTTP transport (one session, JSON answers), to the parsed result;
 * - REST: `POST /workstream_summaries/search?transferables=true` (a SearchInput with the same query),
 *   to the parsed body: the same records, ranked by the same relevance.
 *
 * Over `summaries` workstream summaries made untimed by create_pieces_memory. The two requests
 * alternate one by one (which goes first alternates); medians and the ratio of medians. The REST
 * call is another path of this service, not a floor. Targets are reported, never asserted.
 * `BENCH=smoke`: a short run.
 */
import 'fake-indexeddb/auto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { it } from 'vitest';
import { startLoopbackServer } from '../../src/node/serve.js';
import { machine, recordRun, sampled } from './record.js';
import { median, ms, p95, table } from './stats.js';

const root = resolve(import.meta.dirname, '../..');
const smoke = process.env.BENCH === 'smoke';
const plan = smoke ? { summaries: 50, calls: 20 } : { summaries: 1_000, calls: 200 };
const TARGET = 1.5;
const TOPICS = ['redis caching', 'websocket reconnect', 'oauth token refresh', 'sqlite migration', 'react hooks', 'vite build'];

it('an MCP tool call against the same query through REST', async () => {
  const loadBefore = loadavg().map((l) => Number(l.toFixed(2)));
  const server = await startLoopbackServer({ port: 0, sampleAssets: false });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/model_context_protocol/2025-03-26/mcp`)));
    for (let i = 0; i < plan.summaries; i++) {
      const topic = TOPICS[i % TOPICS.length]!;
      const made = await client.callTool({
        name: 'create_pieces_memory',
        arguments: { summary_description: `${topic} session ${i}`, summary: `Worked on ${topic}, step ${i}.` },
      });
      if (made.isError) throw new Error(`create_pieces_memory failed: ${JSON.stringify(made.content)}`);
    }
    const mcp = async (query: string) => {
      const result = (await client.callTool({ name: 'workstream_summaries_full_text_search', arguments: { query, limit: 100 } })) as {
        content: Array<{ text: string }>;
      };
      const found = (JSON.parse(result.content[0]!.text) as { results: unknown[] }).results.length;
      if (!found) throw new Error(`The MCP search found nothing for ${query}.`);
      return found;
    };
    const rest = async (query: string) => {
      const response = await fetch(`${server.url}/workstream_summaries/search?transferables=true`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      const found = ((await response.json()) as { iterable: unknown[] }).iterable.length;
      if (!found) throw new Error(`The REST search found nothing for ${query}.`);
      return found;
    };
    const timed = async (call: (query: string) => Promise<number>, query: string) => {
      const start = performance.now();
      await call(query);
      return performance.now() - start;
    };
    for (const topic of TOPICS) await Promise.all([mcp(topic), rest(topic)]); // warm-up
    const samples = { mcp: [] as number[], rest: [] as number[] };
    for (let i = 0; i < plan.calls; i++) {
      const query = TOPICS[i % TOPICS.length]!;
      const order = i % 2 ? (['rest', 'mcp'] as const) : (['mcp', 'rest'] as const);
      for (const path of order) samples[path].push(await timed(path === 'mcp' ? mcp : rest, query));
    }

    const ratio = median(samples.mcp) / median(samples.rest);
    const load = loadavg().map((l) => Number(l.toFixed(2)));
    const verdict = smoke ? 'not judged (smoke run)' : ratio <= TARGET ? 'met' : '**missed**';
    const report = [
      `## An MCP tool call against the same query through REST (${smoke ? 'smoke run' : 'full run'})`,
      '',
      `Loopback server, ${plan.summaries} workstream summaries, ${plan.calls} calls of each, alternating. Load averages ${loadBefore.join(', ')} before, ${load.join(', ')} after.`,
      '',
      table(
        ['path', 'median / p95', 'MCP / REST', `target ≤ ${TARGET}×`],
        [
          [
            'MCP tools/call workstream_summaries_full_text_search',
            `${ms(median(samples.mcp))} / ${ms(p95(samples.mcp))}`,
            `${ratio.toFixed(2)}×`,
            verdict,
          ],
          ['REST POST /workstream_summaries/search', `${ms(median(samples.rest))} / ${ms(p95(samples.rest))}`, '', ''],
        ],
      ),
    ].join('\n');
    mkdirSync(resolve(root, '.bench'), { recursive: true });
    writeFileSync(resolve(root, '.bench/mcp.json'), JSON.stringify({ plan, loadBefore, load, samples }, null, 2));
    writeFileSync(resolve(root, '.bench/mcp.md'), `${report}\n`);
    console.info(`\n${report}\n`);
    const restFigure = sampled('REST: POST /workstream_summaries/search?transferables=true', samples.rest);
    recordRun('mcp', {
      plan,
      machine: machine({ loadavgBefore: loadBefore }),
      figures: [
        restFigure,
        sampled('MCP: tools/call workstream_summaries_full_text_search (streamable HTTP)', samples.mcp, {
          against: { measure: restFigure.measure, median: restFigure.median },
          ratio,
          target: `≤ ${TARGET}× the same query through REST`,
          met: smoke ? null : ratio <= TARGET,
        }),
      ],
    });
  } finally {
    await client.close();
    await server.close();
  }
});
