/**
 * The snippets pane: assets created from pasted text (POST /assets/create), renamed and
 * re-described (POST /asset/update), their text edited (POST /format/update/value), deleted
 * (POST /assets/{id}/delete) and searched (GET /search/full_text); each shown with its
 * formats. Kept live by the assets stream: what another tab does appears here.
 */
import type { Api } from './api.js';
import { $, formatBytes, h } from './dom.js';
import type { Errors } from './errors.js';

interface Format {
  id: string;
  role: string;
  classification: { generic: string; specific: string };
  bytes: { value: number };
  fragment?: { string?: { raw?: string } };
  file?: { string?: { raw?: string } };
}

interface Asset {
  id: string;
  name?: string;
  updated: { value: string };
  formats: { iterable: Format[] };
  original: { id: string; reference?: Format };
  preview: { base: { id: string; reference?: Format } };
  annotations?: { iterable: Array<{ id: string; type: string; text: string }> };
}

interface Searched {
  iterable: Array<{ identifier: string; exact: boolean; score: number; match: string }>;
  exact: number;
}

export interface SnippetsPane {
  /** Opens the assets stream (again whenever it closes); resolves once the list was first read. */
  listen(): Promise<void>;
}

/** The application the demo saves snippets as (a Seed names the application that made it). */
const DEMO_APPLICATION = {
  id: '3f1f5a52-2b6d-4c5e-9a51-0d3c2b7a9e01',
  name: 'OPEN_SOURCE',
  version: '1.0.0',
  platform: 'WEB',
  onboarded: true,
  privacy: 'OPEN',
};

const textOf = (format?: Format) => format?.fragment?.string?.raw ?? format?.file?.string?.raw ?? '';
const descriptionOf = (asset: Asset) => asset.annotations?.iterable.find((a) => a.type === 'DESCRIPTION');

export function mountSnippets(api: Api, base: string, { act, show }: Errors): SnippetsPane {
  let assets: Asset[] = [];
  let selected: string | undefined;
  let found: Map<string, number> | undefined;

  const list = $('#snippet-list');
  const detail = $('#snippet-detail');

  function render() {
    $('#snippet-count').textContent = String(assets.length);
    const shown = found ? assets.filter((a) => found!.has(a.id)).sort((a, b) => found!.get(a.id)! - found!.get(b.id)!) : assets;
    list.replaceChildren(
      ...shown.map((asset) =>
        h(
          'li',
          { dataset: { id: asset.id }, class: asset.id === selected ? 'selected' : '' },
          h('button', { type: 'button', class: 'link snippet-open' }, asset.name ?? asset.id),
          ' ',
          h('span', { class: 'badge' }, asset.original.reference?.classification.specific ?? ''),
        ),
      ),
    );
    const asset = assets.find((a) => a.id === selected);
    detail.hidden = !asset;
    if (!asset) return;
    $<HTMLInputElement>('#snippet-rename').value = asset.name ?? '';
    $<HTMLInputElement>('#snippet-description').value = descriptionOf(asset)?.text ?? '';
    const editor = $<HTMLTextAreaElement>('#snippet-text');
    if (editor.dataset.id !== asset.id || editor.dataset.updated !== asset.updated.value) {
      editor.value = textOf(asset.preview.base.reference) || textOf(asset.original.reference);
      editor.dataset.id = asset.id;
      editor.dataset.updated = asset.updated.value;
    }
    $('#snippet-formats').replaceChildren(
      ...asset.formats.iterable.map((format) =>
        h(
          'li',
          { dataset: { id: format.id } },
          `${format.role} · ${format.classification.generic} ${format.classification.specific} · ${formatBytes(format.bytes.value)}`,
          format.id === asset.original.id ? ' · original' : '',
          format.id === asset.preview.base.id ? ' · preview' : '',
        ),
      ),
    );
  }

  async function refresh() {
    const { value } = await api.get<{ iterable: Asset[] }>('/assets');
    assets = value.iterable;
    if (selected && !assets.some((a) => a.id === selected)) selected = undefined;
    render();
  }

  list.addEventListener('click', (event) => {
    const item = (event.target as Element).closest('li');
    if (!item) return;
    selected = item.dataset.id;
    render();
  });

  $('#snippet-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const text = $<HTMLTextAreaElement>('#snippet-new-text').value;
      const name = $<HTMLInputElement>('#snippet-new-name').value.trim();
      const { value } = await api.post<Asset>('/assets/create', {
        type: 'SEEDED_ASSET',
        asset: { application: DEMO_APPLICATION, format: { fragment: { string: { raw: text } } }, ...(name ? { metadata: { name } } : {}) },
      });
      $<HTMLTextAreaElement>('#snippet-new-text').value = '';
      $<HTMLInputElement>('#snippet-new-name').value = '';
      selected = value.id;
      await refresh();
    })(event);
  });

  $('#snippet-edit').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const asset = assets.find((a) => a.id === selected)!;
      const name = $<HTMLInputElement>('#snippet-rename').value;
      const description = $<HTMLInputElement>('#snippet-description').value;
      const annotations = asset.annotations && {
        ...asset.annotations,
        iterable: asset.annotations.iterable.map((a) => (a.type === 'DESCRIPTION' ? { ...a, text: description } : a)),
      };
      await api.post('/asset/update?transferables=false', { ...asset, name, ...(annotations ? { annotations } : {}) });
      const text = $<HTMLTextAreaElement>('#snippet-text').value;
      const format = asset.preview.base.reference;
      if (format && text !== textOf(format)) {
        await api.post('/format/update/value?transferable=false', {
          ...format,
          asset: { id: asset.id },
          fragment: { string: { raw: text } },
        });
      }
      await refresh();
    })(event);
  });

  $('#snippet-delete').addEventListener('click', (event) =>
    act(async () => {
      await api.post(`/assets/${selected}/delete`);
      selected = undefined;
      await refresh();
    })(event),
  );

  $('#snippet-search').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const query = $<HTMLInputElement>('#snippet-query').value.trim();
      if (!query) {
        found = undefined;
        $('#snippet-search-state').textContent = '';
      } else {
        const { value } = await api.get<Searched>(`/search/full_text?query=${encodeURIComponent(query)}`);
        found = new Map(value.iterable.map((s, i) => [s.identifier, i]));
        $('#snippet-search-state').textContent = `${value.iterable.length} found (${value.exact} exact)`;
      }
      render();
    })(event);
  });

  return {
    listen() {
      return new Promise<void>((listed) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        function connect() {
          const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/assets/stream/identifiers`);
          const state = $('#snippet-stream-state');
          socket.addEventListener('open', () => {
            state.dataset.state = 'open';
            state.textContent = 'live';
          });
          socket.addEventListener('message', () => {
            clearTimeout(timer);
            timer = setTimeout(
              () =>
                void refresh()
                  .catch((e) => show(e))
                  .finally(listed),
              20,
            );
          });
          socket.addEventListener('close', () => {
            state.dataset.state = 'closed';
            state.textContent = 'stream closed, reconnecting…';
            void refresh()
              .catch((e) => show(e))
              .finally(listed);
            setTimeout(connect, 1000);
          });
        }
        connect();
      });
    },
  };
}
