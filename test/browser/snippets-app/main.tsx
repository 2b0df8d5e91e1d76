import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import * as Pieces from '@pieces.app/pieces-os-client';
import { startPiecesService } from '../../../src/page/index.js';

type LocalAsset = { id: string; name: string; classification: string };

declare const __PIECES_FAST_PATH__: boolean;
declare global {
  interface Window {
    /** The SDK, for the tests that re-enact other clients in this page. */
    Pieces: typeof Pieces;
  }
}
window.Pieces = Pieces;

function App({ application }: { application: Pieces.Application }) {
  const [snippets, setSnippets] = useState<LocalAsset[]>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [preview, setPreview] = useState<{ text: string; classification: string } | null>(null);
  const [data, setData] = useState('');
  const [name, setName] = useState('');
  const [rename, setRename] = useState('');
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<string[] | null>(null);
  const [activities, setActivities] = useState<string[]>([]);
  const [error, setError] = useState('');

  const refresh = () =>
    new Pieces.AssetsApi()
      .assetsSnapshot({})
      .then((assets) =>
        setSnippets(
          assets.iterable.map((a) => ({ id: a.id, name: a.name ?? '', classification: a.original.reference!.classification.specific })),
        ),
      );
  const refreshActivities = () =>
    new Pieces.ActivitiesApi()
      .activitiesSnapshot({})
      .then((list) => setActivities(list.iterable.filter((a) => a.asset != null).map((a) => `${a.asset!.name}`)));
  const failed = (e: unknown) => setError(String(e));

  // biome-ignore lint/correctness/useExhaustiveDependencies: loads once, on mount, as the example app does.
  useEffect(() => {
    refresh().catch(failed);
    refreshActivities().catch(failed);
  }, []);

  const create = async () => {
    const seed: Pieces.Seed = {
      asset: { application, format: { fragment: { string: { raw: data } } }, metadata: { name } },
      type: Pieces.SeedTypeEnum.SeededAsset,
    };
    await new Pieces.AssetsApi().assetsCreateNewAsset({ seed });
    await refresh();
    await refreshActivities();
  };
  const select = async (id: string) => {
    setSelected(id);
    const asset = await new Pieces.AssetApi().assetSnapshot({ asset: id });
    setPreview({
      text: asset.original.reference?.fragment?.string?.raw ?? '',
      classification: asset.original.reference!.classification.specific,
    });
  };
  const doRename = async () => {
    // As the example app: find it in the snapshot, change its name, send the whole Asset back.
    const list = await new Pieces.AssetsApi().assetsSnapshot({});
    const asset = list.iterable.find((a) => a.id === selected)!;
    asset.name = rename;
    await new Pieces.AssetApi().assetUpdate({ asset });
    await refresh();
  };
  const search = async () => {
    const found = await new Pieces.SearchApi().fullTextSearch({ query });
    setResults(found.iterable.map((s) => snippets.find((x) => x.id === s.identifier)?.name ?? s.identifier));
  };
  const remove = async () => {
    await new Pieces.AssetsApi().assetsDeleteAsset({ asset: selected! });
    setSelected(null);
    setPreview(null);
    await refresh();
  };

  return (
    <div>
      <h2>Saved Snippets</h2>
      <ul id="snippets">
        {snippets.map((s) => (
          <li
            key={s.id}
            data-id={s.id}
            className={s.id === selected ? 'selected' : ''}
            onClick={() => select(s.id).catch(failed)}
            onKeyDown={(e) => e.key === 'Enter' && select(s.id).catch(failed)}
          >
            <h3>{s.name}</h3>
            <p className="classification">{s.classification}</p>
          </li>
        ))}
      </ul>
      <pre id="preview" data-classification={preview?.classification ?? ''}>
        {preview?.text ?? ''}
      </pre>
      <h3>Create a New Snippet</h3>
      <input id="name" value={name} onChange={(e) => setName(e.target.value)} placeholder="name" />
      <textarea id="data" value={data} onChange={(e) => setData(e.target.value)} />
      <button type="button" id="create" onClick={() => create().catch(failed)}>
        Create
      </button>
      <input id="rename" value={rename} onChange={(e) => setRename(e.target.value)} placeholder="new name" />
      <button type="button" id="do-rename" onClick={() => doRename().catch(failed)}>
        Rename
      </button>
      <button type="button" id="delete" onClick={() => remove().catch(failed)}>
        Delete
      </button>
      <input id="query" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="search" />
      <button type="button" id="search" onClick={() => search().catch(failed)}>
        Search
      </button>
      <ul id="results" data-ready={results === null ? 'no' : 'yes'}>
        {(results ?? []).map((r) => (
          <li key={r}>{r}</li>
        ))}
      </ul>
      <ul id="activities">
        {activities.map((a, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: activities can repeat a name; their place in the list is what tells them apart.
          <li key={i}>{a}</li>
        ))}
      </ul>
      <p id="error">{error}</p>
    </div>
  );
}

const status = document.getElementById('status')!;
startPiecesService({ quiet: true, fastPath: __PIECES_FAST_PATH__ })
  .then(async () => {
    // As the example app's Connect.tsx: a tracked application, then its Context's application.
    const context = await new Pieces.ConnectorApi().connect({
      seededConnectorConnection: {
        application: { name: Pieces.ApplicationNameEnum.OpenSource, version: '0.0.1', platform: Pieces.PlatformEnum.Linux },
      },
    });
    createRoot(document.getElementById('root')!).render(<App application={context.application} />);
    status.dataset.state = 'ready';
    status.textContent = 'ready';
  })
  .catch((error: unknown) => {
    status.dataset.state = 'failed';
    status.textContent = String(error);
  });
