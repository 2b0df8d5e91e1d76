/** The sample assets: a conversation started from one (POST /conversations/create/from_asset/{asset}). */
import type { Api } from './api.js';
import type { ConversationPane } from './conversation.js';
import { $, h } from './dom.js';
import type { Errors } from './errors.js';
import type { Conversation } from './types.js';

export interface AssetsPane {
  /** Reads the stored assets into the choice. */
  load(): Promise<void>;
}

export function mountAssets(api: Api, detail: ConversationPane, { act }: Errors): AssetsPane {
  $('#asset-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      const id = $<HTMLSelectElement>('#asset-select').value;
      const { value } = await api.post<{ conversation: { id: string; reference: Conversation } }>(`/conversations/create/from_asset/${id}`);
      detail.render(value.conversation.reference);
    })(event);
  });

  return {
    async load() {
      // The stored assets' ids, named from the assets snapshot (without their text).
      const [assets, named] = await Promise.all([
        api.get<{ iterable: Array<{ id: string }> }>('/assets/identifiers'),
        api.get<{ iterable: Array<{ id: string; name?: string }> }>('/assets?transferables=false'),
      ]);
      const names = new Map(named.value.iterable.map((a) => [a.id, a.name]));
      const options = assets.value.iterable.map(({ id }) => h('option', { value: id }, names.get(id) ?? id));
      $('#asset-select').replaceChildren(...(options.length ? options : [h('option', { value: '' }, 'no stored assets')]));
      $<HTMLButtonElement>('#create-from-asset').disabled = options.length === 0;
    },
  };
}
