/**
 * The material explorer: every kind the generic path stores (the graph table's KINDS with no
 * hand-written store), each from its row alone. Pick a kind: its collection snapshot, kept live
 * by its identifier stream; a create form derived from its Seeded model (material-form.ts); a
 * record opened with its JSON and its associations (each reference field and the records it
 * lists); associate and disassociate it with a record of another kind (the table's RELATIONS
 * between two generic kinds); delete it. Every request goes to the operation's SDK path.
 */
import { GENERIC_KINDS, GENERIC_RELATIONS, KINDS, type KindRow, type MaterialKind, type RelationRow } from 'pieces-os-worker/core';
import type { ServiceWatch } from 'pieces-os-worker';
import { ApiError, type Api } from './api.js';
import { $, h, when } from './dom.js';
import type { Errors } from './errors.js';
import { materialForm, type MaterialForm } from './material-form.js';

type Json = Record<string, unknown>;
type Material = Json & { id: string; created?: { value: string } };

export interface MaterialsPane {
  /** Lists the chosen kind and opens its stream; resolves once the list was first read. */
  listen(): Promise<void>;
}

const rowOf = (kind: MaterialKind) => KINDS.find((row) => row.kind === kind)!;

/** An operation's path with its parameters filled in order. */
const fill = (path: string, ...ids: string[]) => {
  let i = 0;
  return path.replace(/\{\w+\}/g, () => encodeURIComponent(ids[i++]!));
};

/** The keys whose text names a record, looked for in it (and in its nested models) in this order. */
const LABEL_KEYS = ['name', 'text', 'readable', 'fullpath', 'title', 'email', 'username', 'url'];

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A record's name for a list: the first text among LABEL_KEYS, found breadth first; else its id. */
function labelOf(record: Json): string {
  let level: Json[] = [record];
  for (let depth = 0; depth < 3 && level.length; depth++) {
    for (const key of LABEL_KEYS) {
      const found = level.find((node) => typeof node[key] === 'string' && node[key]);
      if (found) return found[key] as string;
    }
    level = level.flatMap((node) => Object.values(node).filter(isJson));
  }
  return String(record.id ?? '?');
}

/** The ids a reference field of a record lists (a Flattened list, or one reference). */
function idsAt(record: Json, key: string, many: boolean): string[] {
  const node = key.split('.').reduce<unknown>((at, step) => (isJson(at) ? at[step] : undefined), record);
  if (!isJson(node)) return [];
  if (many)
    return Array.isArray(node.iterable)
      ? node.iterable.flatMap((item: unknown) => (isJson(item) && typeof item.id === 'string' ? [item.id] : []))
      : [];
  return typeof node.id === 'string' ? [node.id] : [];
}

export function mountMaterials(api: Api, base: string, { act, show }: Errors, watch: ServiceWatch): MaterialsPane {
  const kindSelect = $<HTMLSelectElement>('#material-kind');
  const list = $('#material-list');
  const detail = $('#material-detail');
  const relationSelect = $<HTMLSelectElement>('#material-relation');
  const otherSelect = $<HTMLSelectElement>('#material-other');
  const streamState = $('#material-stream-state');

  let row: KindRow = GENERIC_KINDS[0]!;
  let form: MaterialForm | undefined;
  let records: Material[] = [];
  let opened: Material | undefined;
  let socket: WebSocket | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  kindSelect.replaceChildren(...GENERIC_KINDS.map((r) => h('option', { value: r.kind }, `${r.kind} (${r.model})`)));

  /** A kind's records through its collection snapshot. */
  async function recordsOf(kind: MaterialKind): Promise<Material[]> {
    const snapshot = rowOf(kind).ops.snapshot!;
    const { value } = await api.get<{ iterable: Material[] }>(
      snapshot.query?.includes('transferables') ? `${snapshot.path}?transferables=false` : snapshot.path,
    );
    return value.iterable;
  }

  const choices = async (kind: MaterialKind) => (await recordsOf(kind)).map((r) => ({ id: r.id, label: labelOf(r) }));

  function showStreamState(state: 'open' | 'closed' | 'stale', text: string) {
    streamState.dataset.state = state;
    streamState.textContent = text;
  }

  function render() {
    $('#material-count').textContent = String(records.length);
    list.replaceChildren(
      ...records.map((record) => {
        const open = h('button', { type: 'button', class: 'link material-open' }, 'open');
        open.addEventListener(
          'click',
          act(() => openRecord(record.id)),
        );
        const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': `delete ${labelOf(record)}` }, 'delete');
        remove.addEventListener(
          'click',
          act(() => removeRecord(record.id)),
        );
        return h(
          'li',
          { dataset: { id: record.id }, ...(record.id === opened?.id ? { 'aria-current': '' } : {}) },
          h('span', { class: 'name' }, labelOf(record)),
          h('span', { class: 'muted' }, `${row.model} · ${when(record.created)}`),
          h('span', { class: 'actions' }, open, remove),
        );
      }),
    );
  }

  /** Reads started: a read answered after a later one started is stale (answers may come back out of order). */
  let refreshes = 0;
  let opens = 0;

  async function refresh() {
    const shown = row;
    const mine = ++refreshes;
    const read = await recordsOf(shown.kind);
    // A later read is under way, or another kind was picked meanwhile: this read is stale.
    if (mine !== refreshes || row !== shown) return;
    records = read;
    if (opened && !records.some((r) => r.id === opened!.id)) closeRecord();
    render();
  }

  function closeRecord() {
    opened = undefined;
    detail.hidden = true;
    delete detail.dataset.id;
    $('#material-links').replaceChildren();
  }

  /** Reads a record of the shown kind and shows it: its JSON and each reference field with the records it lists. */
  async function openRecord(id: string) {
    const shown = row;
    const mine = ++opens;
    let value: Material;
    try {
      value = (await api.get<Material>(fill(shown.ops.item!.path, id))).value;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        if (mine === opens) closeRecord();
        return;
      }
      throw error;
    }
    const links = await Promise.all(
      Object.entries(shown.references).map(async ([key, reference]) => {
        const ids = idsAt(value, key, reference.many);
        const item = rowOf(reference.kind).ops.item;
        const generic = GENERIC_KINDS.some((r) => r.kind === reference.kind);
        // A linked record by its name: read where it is a link (not a record held whole), its kind has an item snapshot.
        const named = await Promise.all(
          ids.map(async (linked) => {
            if (reference.model || !item) return { id: linked, label: linked };
            try {
              return { id: linked, label: labelOf((await api.get<Json>(fill(item.path, linked))).value) };
            } catch {
              return { id: linked, label: `${linked} (not found)` };
            }
          }),
        );
        const entries = named.map((linked) => {
          if (!generic) return h('span', { class: 'linked', dataset: { id: linked.id } }, linked.label);
          const button = h('button', { type: 'button', class: 'link linked', dataset: { id: linked.id } }, linked.label);
          button.addEventListener(
            'click',
            act(() => showKind(reference.kind, linked.id)),
          );
          return button;
        });
        return h(
          'li',
          { dataset: { key } },
          h('span', { class: 'name' }, `${key} (${reference.kind})`),
          h('span', { class: 'muted' }, ...(entries.length ? entries : ['—'])),
        );
      }),
    );
    if (row !== shown) return; // Another kind was chosen meanwhile.
    // Another record was opened, or another kind picked, meanwhile: this one is no longer the one to show.
    if (mine !== opens || row !== shown) return;
    // Shown at once, when every part is read: detail's data-id says which record it shows, all of it.
    opened = value;
    $('#material-title').textContent = `${shown.model} ${labelOf(value)}`;
    $('#material-json').textContent = JSON.stringify(value, null, 2);
    $('#material-links').replaceChildren(...links);
    detail.dataset.id = id;
    detail.hidden = false;
    render();
  }

  async function removeRecord(id: string) {
    await api.post(fill(row.ops.delete!.path, id));
    if (opened?.id === id) closeRecord();
    if (!row.ops.stream) await refresh();
  }

  /** The associations of the shown kind with another generic kind, as choices: the other kind and the SDK's operation. */
  let relations: RelationRow[] = [];
  async function showRelations() {
    relations = GENERIC_RELATIONS.filter((r) => r.from === row.kind || r.to === row.kind);
    relationSelect.replaceChildren(
      ...relations.map((r) => h('option', { value: r.associate.name }, `${r.from === row.kind ? r.to : r.from} · ${r.associate.name}`)),
    );
    if (!relations.length) relationSelect.append(h('option', { value: '' }, `no association of ${row.kind} with another generic kind`));
    await showOthers();
  }

  async function showOthers() {
    const relation = relations.find((r) => r.associate.name === relationSelect.value);
    if (!relation) return otherSelect.replaceChildren(h('option', { value: '' }, '—'));
    const other = relation.from === row.kind ? relation.to : relation.from;
    const found = (await choices(other)).filter((r) => r.id !== opened?.id);
    otherSelect.replaceChildren(...found.map((r) => h('option', { value: r.id }, r.label)));
    if (!found.length) otherSelect.append(h('option', { value: '' }, `no ${other} yet`));
  }

  async function link(op: 'associate' | 'disassociate') {
    const relation = relations.find((r) => r.associate.name === relationSelect.value);
    if (!relation || !opened || !otherSelect.value) throw new Error('Choose an association and a record to link.');
    // The record shown is the path's first record where its kind is the relation's first (both, for a kind with itself).
    const ids = relation.from === row.kind ? [opened.id, otherSelect.value] : [otherSelect.value, opened.id];
    await api.post(fill(relation[op].path, ...ids));
    await openRecord(opened.id);
  }

  /** Opens the stream of the shown kind (where the SDK has one); each frame reads the list and the open record again. */
  function connect() {
    const shown = row;
    socket?.close();
    socket = undefined;
    if (!shown.ops.stream) return showStreamState('closed', 'no stream in the SDK: read after each change');
    // Not live until this kind's own socket opens (the one closed above may have been).
    showStreamState('closed', 'connecting…');
    const next = new WebSocket(`${base.replace(/^http/, 'ws')}${shown.ops.stream.path}`);
    socket = next;
    next.addEventListener('open', () => {
      if (socket === next && watch.state !== 'lost') showStreamState('open', 'live');
    });
    next.addEventListener('message', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        void refresh()
          .then(() => opened && openRecord(opened.id))
          .catch(show);
      }, 20);
    });
    next.addEventListener('close', () => {
      if (socket !== next) return; // Another kind's stream took its place.
      showStreamState('closed', 'stream closed, reconnecting…');
      void refresh().catch(show);
      setTimeout(() => socket === next && connect(), 1000);
    });
  }

  watch.addEventListener('statechange', () => {
    if (watch.state === 'lost') showStreamState('stale', 'not live: the worker is gone');
    else if (socket) connect();
  });

  /** Shows a kind: its form, list, associations and stream; then opens `id` when given. */
  async function showKind(kind: MaterialKind, id?: string) {
    row = rowOf(kind);
    kindSelect.value = kind;
    closeRecord();
    form = materialForm(row, choices);
    $('#material-fields').replaceChildren(...form.fields);
    $<HTMLTextAreaElement>('#material-extra').value = '';
    connect();
    await refresh();
    await showRelations();
    if (id) await openRecord(id);
  }

  kindSelect.addEventListener(
    'change',
    act(() => showKind(kindSelect.value as MaterialKind)),
  );
  relationSelect.addEventListener('change', act(showOthers));
  $('#material-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const seed = form!.seed($<HTMLTextAreaElement>('#material-extra').value);
      const { value } = await api.post<Material & { iterable?: Material[] }>(row.ops.create!.path, seed);
      // A share's create answers its collection (Shares) holding the one made.
      const made = row.ops.create!.answer === row.plural ? value.iterable![0]! : value;
      $<HTMLTextAreaElement>('#material-extra').value = '';
      if (!row.ops.stream) await refresh();
      await openRecord(made.id);
    })(event);
  });
  $('#material-associate').addEventListener('submit', (event) => {
    event.preventDefault();
    act(() => link('associate'))(event);
  });
  $('#material-disassociate').addEventListener(
    'click',
    act(() => link('disassociate')),
  );
  $('#material-delete').addEventListener(
    'click',
    act(() => removeRecord(opened!.id)),
  );

  return { listen: () => showKind(row.kind) };
}
