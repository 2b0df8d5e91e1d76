/**
 * The tools of the MCP endpoint, with the names and input schemas Pieces OS publishes
 * (PiecesOS 12.3.8): `ask_pieces_ltm` (answered from long-term memory's recall), `create_pieces_memory`
 * (a workstream summary with its SUMMARY and DESCRIPTION annotations, written through the REST
 * operations), and, made from the material table (src/shared/graph.ts) for every kind with a
 * collection snapshot: `<materials>_full_text_search`, `<materials>_vector_search`,
 * `<materials>_batch_snapshot`, then `material_identifiers` over every kind and `extract_temporal_range`.
 * Every read and write goes through the service's own REST operations (`respond`), so a tool sees
 * and changes exactly what the REST API does, and its changes are announced on the same streams.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { KINDS, type KindRow } from '../../shared/graph.js';
import type { ServiceContext } from '../context.js';
import { recall, type RecallHit } from '../ltm/recall.js';
import { searchMaterials } from '../models/material.js';
import type { JsonObject } from '../validate.js';
import { temporalRanges } from './temporal.js';

export interface ToolContext {
  service: ServiceContext;
  /** The service's answer to a request (its REST operations). */
  respond: (request: Request) => Promise<Response>;
  /** The origin the session's client reached the service at: the tools' requests go there. */
  origin: string;
}

type Item = JsonObject & { id: string };

const snake = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** A kind's materials as Pieces names them in tool names (`workstream_summaries`, `wpe_source_windows`). */
const toolStem = (row: KindRow) => snake(row.plural!).replace(/^workstream_pattern_engine_/, 'wpe_');
/** A kind's `material_type` (`WORKSTREAM_SUMMARIES`). */
const materialType = (row: KindRow) => snake(row.plural!).toUpperCase();

/** The kinds the tools serve: those with a collection and its snapshot (GET). */
export const TOOL_KINDS: readonly KindRow[] = KINDS.filter((row) => row.plural && row.ops.snapshot?.method === 'GET');

const json = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }] });

/** A REST request of the service, its JSON answer; a failure is thrown (the SDK answers it as the tool's error). */
async function rest(context: ToolContext, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const response = await context.respond(
    new Request(context.origin + path, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    }),
  );
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
  return response.status === 204 ? undefined : response.json();
}

/** Every record of a kind, as its REST snapshot lists them (those with an id). */
async function listOf(context: ToolContext, row: KindRow): Promise<Item[]> {
  const answer = (await rest(context, 'GET', row.ops.snapshot!.path)) as { iterable?: unknown[] };
  return (answer.iterable ?? []).filter((item): item is Item => typeof (item as Item)?.id === 'string');
}

const RANGE = z
  .object({
    from: z.string().datetime({ offset: true }).optional().describe('Start (ISO 8601, UTC), inclusive'),
    to: z.string().datetime({ offset: true }).optional().describe('End (ISO 8601, UTC), inclusive'),
  })
  .strict();
type Range = z.infer<typeof RANGE>;

const timeOf = (value: unknown) => {
  const raw = (value as { value?: unknown } | undefined)?.value;
  return typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
};

/** Whether a record's time (`created`, `updated`) is inside `range` (no range: yes; a record without that time: no). */
function within(item: Item, field: 'created' | 'updated', range: Range | undefined): boolean {
  if (!range) return true;
  const time = timeOf(item[field]);
  if (Number.isNaN(time)) return false;
  return (range.from === undefined || time >= Date.parse(range.from)) && (range.to === undefined || time <= Date.parse(range.to));
}

const TIME_FILTERS = {
  created: RANGE.optional().describe('Only materials created in this range (open at an end left out)'),
  updated: RANGE.optional().describe('Only materials last updated in this range'),
};

type Ranked = JsonObject & { identifier: string; similarity: number; exact: boolean };

/** The record a search item carries (its key is the kind's, `summary` for a workstream summary). */
const recordOf = (item: Ranked) => Object.values(item).find((value): value is Item => typeof (value as Item)?.id === 'string');

/**
 * The records of a kind matching a query inside the time filters, best first: the kind's own REST
 * search where it takes a SearchInput (the same relevance its clients get), else the generic
 * path's word relevance over its snapshot.
 */
async function ranked(context: ToolContext, row: KindRow, query: string, created?: Range, updated?: Range): Promise<Ranked[]> {
  const inside = (item: Item) => within(item, 'created', created) && within(item, 'updated', updated);
  const search = row.ops.search;
  if (search?.body === 'SearchInput') {
    const answer = (await rest(context, 'POST', `${search.path}?transferables=true`, { query })) as { iterable: Ranked[] };
    return answer.iterable.filter((item) => (created || updated ? inside(recordOf(item) ?? ({} as Item)) : true));
  }
  const records = (await listOf(context, row)).filter(inside);
  return (
    searchMaterials(
      row,
      query,
      records.map((value) => ({ value })),
      true,
    ) as { iterable: Ranked[] }
  ).iterable;
}

function materialTools(server: McpServer, context: ToolContext, row: KindRow) {
  const stem = toolStem(row);
  const type = materialType(row);
  const label = snake(row.plural!).replace(/_/g, ' ');
  server.registerTool(
    `${stem}_full_text_search`,
    {
      description:
        `Searches ${label} by keyword: every record whose text holds the whole query (exact) or some of its words, best first, ` +
        `each whole with its similarity (the share of the query's words it holds; 1 for the whole phrase) and exact flag.`,
      inputSchema: {
        query: z.string().min(1).max(1000).describe('Search query'),
        limit: z.number().int().min(1).max(100).optional().describe('Max results (default 25)'),
        ...TIME_FILTERS,
      },
    },
    async ({ query, limit, created, updated }) => {
      const results = (await ranked(context, row, query, created, updated))
        .slice(0, limit ?? 25)
        .map(({ identifier: _id, ...rest }) => rest);
      return json({ material_type: type, query, count: results.length, results });
    },
  );
  server.registerTool(
    `${stem}_vector_search`,
    {
      description:
        `Finds ${label} related to a query, as identifiers and scores (follow with ${stem}_batch_snapshot). ` +
        'No embeddings are computed by this service: results are ranked by the same word relevance as ' +
        `${stem}_full_text_search (score: the share of the query's words a record holds, 1 for the whole phrase), and threshold compares with that score.`,
      inputSchema: {
        query: z.string().min(1).max(1_000_000).describe('Natural language query'),
        threshold: z.number().min(0).max(1).optional().describe('Minimum score (0.0-1.0)'),
        limit: z.number().int().min(1).max(100).optional().describe('Max results (default 25)'),
        ...TIME_FILTERS,
      },
    },
    async ({ query, threshold, limit, created, updated }) => {
      const results = (await ranked(context, row, query, created, updated))
        .filter((item) => item.similarity >= (threshold ?? 0))
        .slice(0, limit ?? 25)
        .map((item) => ({ identifier: item.identifier, score: item.similarity }));
      return json({
        material_type: type,
        count: results.length,
        results,
        next_steps: `Call ${stem}_batch_snapshot with these identifiers for the whole records.`,
      });
    },
  );
  server.registerTool(
    `${stem}_batch_snapshot`,
    {
      description: `Retrieves whole ${label} by their identifiers (1-100), with the identifiers not found in missing_ids.`,
      inputSchema: { identifiers: z.array(z.string().min(1)).min(1).max(100).describe('Identifiers (UUIDs), 1-100') },
    },
    async ({ identifiers }) => {
      const byId = new Map((await listOf(context, row)).map((item) => [item.id, item]));
      const wanted = [...new Set(identifiers)];
      const items = wanted.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
      const missing = wanted.filter((id) => !byId.has(id));
      return json({
        material_type: type,
        count: items.length,
        requested: wanted.length,
        items,
        ...(missing.length ? { missing_ids: missing } : {}),
      });
    },
  );
}

/** Words of `ask_pieces_ltm`'s context: an open file's name (without its folders). */
const fileName = (path: string) => path.split(/[\\/]/).filter(Boolean).at(-1) ?? '';

/** A recall hit as Pieces's ask_pieces_ltm answers it (`summaries` and `events` with created, score, combined_string…). */
function hitWire(hit: RecallHit) {
  const base = { id: hit.id, created: hit.created, score: hit.score };
  if (hit.kind === 'workstreamSummary') return { ...base, summary_title: hit.title, combined_string: hit.text };
  return {
    ...base,
    ...(hit.application ? { app_title: hit.application } : {}),
    window_title: hit.title,
    ...(hit.url ? { browser_url: hit.url } : {}),
    combined_string: hit.text,
  };
}

function askPiecesLtm(server: McpServer, context: ToolContext) {
  server.registerTool(
    'ask_pieces_ltm',
    {
      description:
        "Asks the user's long-term memory (workstream summaries and events) a question about their past work: " +
        'the summaries and events that answer it, ranked, each with its score, time and text (combined_string), ' +
        'and for events the application, window title and URL. Use it to recall what the user worked on, past decisions and context.',
      inputSchema: {
        question: z.string().min(1).describe("The user's question, as they asked it"),
        topics: z.array(z.string()).optional().describe('Topical keywords to narrow results (e.g. ["python", "react"])'),
        open_files: z.array(z.string()).optional().describe('Paths of the files open now, for context (their names join the question)'),
        application_sources: z.array(z.string()).optional().describe('Only memories from these applications (e.g. ["chrome", "vscode"])'),
        chat_llm: z
          .string()
          .describe(
            'The LLM the host chats with (e.g. "gpt-4o-mini"); the answer is the memories themselves, ranked, not a generated text',
          ),
        related_questions: z.array(z.string()).optional().describe('Further questions that widen the search'),
        connected_client: z.string().optional().describe('The client asking (e.g. "Cursor", "Claude")'),
      },
    },
    async ({ question, topics, open_files, application_sources, related_questions }) => {
      const asked = [question, ...(related_questions ?? []), ...(open_files ?? []).map(fileName)].filter(Boolean).join('\n');
      const hits = await recall(context.service, {
        question: asked,
        ...(topics?.length ? { topics } : {}),
        ...(application_sources?.length ? { applications: application_sources } : {}),
      });
      return json({
        summaries: hits.filter((hit) => hit.kind === 'workstreamSummary').map(hitWire),
        events: hits.filter((hit) => hit.kind === 'workstreamEvent').map(hitWire),
      });
    },
  );
}

function createPiecesMemory(server: McpServer, context: ToolContext) {
  server.registerTool(
    'create_pieces_memory',
    {
      description:
        'Saves a memory in Pieces: a workstream summary named by summary_description, its SUMMARY annotation the summary ' +
        '(markdown) and its DESCRIPTION annotation the summary_description, linked to the files, project folder and links given. ' +
        'It can be recalled later with ask_pieces_ltm and the workstream summary search tools.',
      inputSchema: {
        summary_description: z.string().min(1).describe('A concise title or summary of the memory (1-2 sentences)'),
        summary: z.string().min(1).describe('The memory itself: a detailed, markdown-formatted narrative'),
        project: z.string().min(1).optional().describe('Absolute path of the project root folder'),
        files: z.array(z.string().min(1)).optional().describe('Absolute paths of files or folders to associate'),
        externalLinks: z.array(z.string().url()).optional().describe('URLs and external references to associate'),
        connected_client: z.string().optional().describe('The client saving it (e.g. "Cursor", "Claude")'),
      },
    },
    async ({ summary_description, summary, project, files, externalLinks }) => {
      const models = (await rest(context, 'GET', '/models')) as { iterable: JsonObject[] };
      const created = (await rest(context, 'POST', '/workstream_summaries/create', {
        name: summary_description,
        model: models.iterable[0],
        mechanism: 'MANUAL',
      })) as Item;
      const id = created.id;
      const link = (what: string, other: string) => rest(context, 'POST', `/workstream_summary/${id}/${what}/associate/${other}`);
      for (const [type, text] of [
        ['SUMMARY', summary],
        ['DESCRIPTION', summary_description],
      ] as const) {
        const note = (await rest(context, 'POST', '/annotations/create', { type, text, mechanism: 'MANUAL' })) as Item;
        await link('annotations', note.id);
      }
      for (const url of new Set(externalLinks ?? [])) {
        const website = (await rest(context, 'POST', '/websites/create', { url, name: url, mechanism: 'MANUAL' })) as Item;
        await link('websites', website.id);
      }
      const paths = [
        ...(project ? [{ fullpath: project, type: 'DIRECTORY' }] : []),
        ...(files ?? []).map((fullpath) => ({ fullpath, type: 'FILE' })),
      ];
      for (const seed of paths) {
        const anchor = (await rest(context, 'POST', '/anchors/create', seed)) as Item;
        await link('anchors', anchor.id);
      }
      return {
        content: [
          {
            type: 'text',
            text:
              `Memory created: workstream summary ${id}, "${summary_description}". ` +
              'Recall it with ask_pieces_ltm, or find it with workstream_summaries_full_text_search and workstream_summaries_batch_snapshot.',
          },
        ],
      };
    },
  );
}

function materialIdentifiers(server: McpServer, context: ToolContext) {
  const types = TOOL_KINDS.map(materialType) as [string, ...string[]];
  const byType = new Map(TOOL_KINDS.map((row) => [materialType(row), row]));
  server.registerTool(
    'material_identifiers',
    {
      description:
        'Lists the identifiers of the materials of one type, in the order they were made, optionally only those created or updated in a time range; ' +
        "follow with the type's batch snapshot tool for the whole records.",
      inputSchema: {
        material_type: z.enum(types).describe('The type of material'),
        limit: z.number().int().min(1).max(1000).optional().describe('Max identifiers (default 100)'),
        ...TIME_FILTERS,
      },
    },
    async ({ material_type, limit, created, updated }) => {
      const row = byType.get(material_type)!;
      const max = limit ?? 100;
      const identifiers = (await listOf(context, row))
        .filter((item) => within(item, 'created', created) && within(item, 'updated', updated))
        .slice(0, max)
        .map((item) => item.id);
      return json({
        material_type,
        count: identifiers.length,
        identifiers,
        limit: max,
        next_step: `Call ${toolStem(row)}_batch_snapshot with these identifiers for the whole records.`,
      });
    },
  );
}

function extractTemporalRange(server: McpServer, context: ToolContext) {
  server.registerTool(
    'extract_temporal_range',
    {
      description:
        'Turns the time phrases of a text ("yesterday", "this morning", "last week", "the past 3 hours", "last Tuesday afternoon", "on 2025-02-11") ' +
        'into UTC ranges {from, to} for the created and updated filters of the other tools; no phrase: no range. ' +
        'Read by rules (no model), in UTC; a range reaching past now ends now.',
      inputSchema: { query: z.string().min(1).max(300).describe('Text with time phrases') },
    },
    async ({ query }) => {
      const ranges = temporalRanges(query, context.service.clock.now());
      return json({ query, count: ranges.length, ranges });
    },
  );
}

/** Registers every tool on a session's server. */
export function registerTools(server: McpServer, context: ToolContext): void {
  askPiecesLtm(server, context);
  createPiecesMemory(server, context);
  for (const row of TOOL_KINDS) materialTools(server, context, row);
  materialIdentifiers(server, context);
  extractTemporalRange(server, context);
}
