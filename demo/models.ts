/**
 * The models pane: the catalogue (`GET /models`), which adapter answers each
 * model (the mapping, from the page API), a model mapped to its own endpoint
 * (an Ollama or OpenAI-compatible one), and local models' downloads with their
 * progress as each model's socket reports it; the models stream refreshes the list.
 */
import { getModel, getModelMapping, setModel, type ModelConfig } from 'pieces-os-worker';
import type { Api } from './api.js';
import { $, h } from './dom.js';
import type { Errors } from './errors.js';

interface Model {
  id: string;
  name: string;
  unique?: string;
  foundation?: string;
  cloud: boolean;
  cpu?: boolean;
  downloaded?: boolean;
  downloading?: boolean;
}

interface Progress {
  status?: string;
  percentage?: number | null;
}

export interface ModelsPane {
  /** Reads the catalogue and the mapping again. */
  refresh(): Promise<void>;
}

export function mountModels(api: Api, base: string, errors: Errors): ModelsPane {
  const list = $('#model-list');
  const select = $<HTMLSelectElement>('#map-model');
  const progress = new Map<string, string>();
  const sockets = new Map<string, WebSocket>();
  const wsBase = base.replace(/^http/, 'ws');
  let models: Model[] = [];

  /** A local model's progress socket, opened once: its frames show in its row. */
  function follow(model: Model) {
    if (sockets.has(model.id)) return;
    const socket = new WebSocket(`${wsBase}/model/${model.id}/download/progress`);
    sockets.set(model.id, socket);
    socket.onmessage = (event) => {
      const frame = JSON.parse(String(event.data)) as Progress;
      progress.set(model.id, `${frame.status}${typeof frame.percentage === 'number' ? ` ${frame.percentage}%` : ''}`);
      const cell = list.querySelector<HTMLElement>(`li[data-id="${model.id}"] .progress`);
      if (cell) {
        cell.textContent = progress.get(model.id)!;
        cell.dataset.status = frame.status ?? '';
      }
      if (frame.status !== 'IN-PROGRESS' && frame.status !== 'INITIALIZED')
        void pane.refresh().catch((error: unknown) => errors.show(error));
    };
    socket.onclose = () => sockets.delete(model.id);
  }

  const act = (path: string, control: EventTarget) =>
    void api.post(path).then(
      () => pane.refresh(),
      (error: unknown) => errors.show(error, control),
    );

  function row(model: Model, answeredBy: string) {
    const flags = model.cloud
      ? 'cloud'
      : `local, ${model.cpu ? 'CPU' : 'GPU'}${model.downloaded ? ', downloaded' : ''}${model.downloading ? ', downloading' : ''}`;
    return h(
      'li',
      { dataset: { id: model.id, downloaded: String(!!model.downloaded) } },
      h('strong', {}, model.name),
      ' ',
      h('span', { class: 'muted' }, `${model.unique ?? ''} · ${model.foundation ?? ''} · ${flags}`),
      h('div', { class: 'muted answered' }, `answered by ${answeredBy}`),
      model.cloud
        ? null
        : h(
            'div',
            { class: 'row' },
            model.downloaded
              ? h('button', { type: 'button', class: 'secondary delete' }, 'Delete download')
              : h(
                  'button',
                  { type: 'button', class: model.downloading ? 'secondary cancel' : 'download' },
                  model.downloading ? 'Cancel' : 'Download',
                ),
            h('span', { class: 'progress', dataset: { status: '' } }, progress.get(model.id) ?? ''),
          ),
    );
  }

  list.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest('button');
    const id = button?.closest<HTMLElement>('li')?.dataset.id;
    if (!button || !id) return;
    if (button.classList.contains('download')) act(`/model/${id}/download`, button);
    else if (button.classList.contains('cancel')) act(`/model/${id}/download/cancel`, button);
    else if (button.classList.contains('delete')) act(`/models/${id}/delete/cache`, button);
  });

  $<HTMLFormElement>('#map-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const kind = $<HTMLSelectElement>('#map-kind').value;
    const config: ModelConfig | undefined =
      kind === 'default'
        ? undefined
        : {
            type: kind as 'ollama' | 'openai',
            baseUrl: $<HTMLInputElement>('#map-base-url').value.trim(),
            model: $<HTMLInputElement>('#map-name').value.trim(),
          };
    setModel(config, select.value).then(
      () => pane.refresh(),
      (error: unknown) => errors.show(error, event.target),
    );
  });

  // The models stream: every download kept or deleted.
  const stream = new WebSocket(`${wsBase}/models/stream/identifiers`);
  let first = true;
  stream.onmessage = () => {
    if (first) first = false;
    else void pane.refresh().catch((error: unknown) => errors.show(error));
  };

  /** Reads of the list started: one answered after a later one started is stale (a delete's read may come back before an older one). */
  let reads = 0;
  const pane: ModelsPane = {
    async refresh() {
      const mine = ++reads;
      const [{ value }, mapping, fallback] = await Promise.all([api.get<{ iterable: Model[] }>('/models'), getModelMapping(), getModel()]);
      if (mine !== reads) return;
      models = value.iterable;
      $('#model-count').textContent = String(models.length);
      list.replaceChildren(...models.map((model) => row(model, mapping[model.id] ?? `the default: ${fallback}`)));
      const chosen = select.value;
      select.replaceChildren(...models.map((model) => h('option', { value: model.id }, model.name)));
      if (chosen) select.value = chosen;
      for (const model of models) if (!model.cloud) follow(model);
    },
  };
  return pane;
}
