/**
 * Classification, the machine-learning helpers, discovery, tag-based search, the copilot's
 * helpers (hints, reprompt, persons related), the connector's extras, the asset sources (macOS,
 * UltraSuite) and local notifications: each answered deterministically from what it is sent and
 * the store, what it writes read back (after a restart too), bad input a 400 that changes nothing.
 * Every 2xx body is held to its SDK model by the response check (test/unit/support/response-check.ts).
 */
import {
  ClassificationApi,
  ConnectorApi,
  DiscoveryApi,
  MachineLearningApi,
  MacOSApi,
  NotificationsApi,
  QGPTApi,
  WorkstreamApi,
  SearchApi,
  UltraSuiteApi,
} from '@pieces.app/pieces-os-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ModelAdapter } from '../../../src/core/copilot/model.js';
import { BASE, dump, jsonPost, setup } from '../support/harness.js';

type T = Awaited<ReturnType<typeof setup>>;

const apis = (t: T) => ({
  classification: new ClassificationApi(t.configuration),
  ml: new MachineLearningApi(t.configuration),
  discovery: new DiscoveryApi(t.configuration),
  search: new SearchApi(t.configuration),
  qgpt: new QGPTApi(t.configuration),
  connector: new ConnectorApi(t.configuration),
  macos: new MacOSApi(t.configuration),
  ultra: new UltraSuiteApi(t.configuration),
  notifications: new NotificationsApi(t.configuration),
  workstream: new WorkstreamApi(t.configuration),
});

/** A connected application's id. */
async function connected(t: T): Promise<string> {
  const context = await t.connector.connect({
    seededConnectorConnection: { application: { name: 'VS_CODE', version: '1.0.0', platform: 'LINUX' } as never },
  });
  return context.application.id;
}

/** Posts a body and expects a 4xx/5xx naming `field`, with nothing in the store changed. */
async function refused(t: T, path: string, body: unknown, status: number, field: string) {
  const before = await dump(t.databaseName);
  const changes = t.changes.length;
  const response = await t.fetch(`${BASE}${path}`, body === undefined ? { method: 'POST' } : jsonPost(body));
  expect(response.status, path).toBe(status);
  expect(await response.text()).toContain(field);
  expect(await dump(t.databaseName)).toBe(before);
  expect(t.changes).toHaveLength(changes);
}

const fragment = (raw: string) => ({ fragment: { string: { raw } } });

afterEach(() => vi.unstubAllGlobals());

describe('classification', () => {
  it('classifies a format, renders it as highlight.js HTML when asked, and refuses a format without content', async () => {
    const t = await setup();
    const { classification } = apis(t);
    const converted = await classification.convertGenericClassification({
      seededFormat: fragment('export interface Point { x: number; y: number }'),
    });
    expect(converted.classification).toEqual({ generic: 'CODE', specific: 'ts' });
    expect(converted.fragment?.string?.raw).toBe('export interface Point { x: number; y: number }');
    const html = await classification.convertGenericClassification({
      seededFormat: { ...fragment('if (a < b && c) {}'), classification: { specific: 'js', rendering: 'HIGHLIGHT_JS_HTML' } },
    });
    expect(html.fragment?.string?.raw).toBe('<pre><code class="hljs language-js">if (a &lt; b &amp;&amp; c) {}</code></pre>');
    expect(html.classification).toEqual({ generic: 'CODE', specific: 'js', rendering: 'HIGHLIGHT_JS_HTML' });
    await refused(t, '/classification/generic/convert', { classification: { specific: 'ts' } }, 400, 'no content');
    await refused(t, '/classification/generic/convert', { ...fragment('x'), colour: 'red' }, 400, 'colour');
    await refused(t, '/classification/generic/convert', undefined, 400, 'SeededFormat');
  });
});

describe('the classifier', () => {
  it('classifies a line of plain words as text (its CSS pattern backtracked exponentially on one: a dozen words never finished)', async () => {
    const t = await setup();
    const words = 'Remember to rotate the staging keys every quarter and to tell the team when the new ones are live';
    const converted = await apis(t).classification.convertGenericClassification({ seededFormat: fragment(words) });
    expect(converted.classification).toEqual({ generic: 'TEXT', specific: 'txt' });
  });
});

describe('technical language', () => {
  const message = [
    'To debounce a call, wrap it:',
    '```ts\nexport function debounce(f: () => void, ms: number) {\n  let t: ReturnType<typeof setTimeout>;\n}\n```',
    'Then call it as usual.',
    'import os\nfrom pathlib import Path\n\ndef main():\n    print(Path.cwd())',
  ].join('\n\n');

  it('is split into text and code in order; with classify, each code segment has its language', async () => {
    const t = await setup();
    const { ml } = apis(t);
    const segmented = await ml.segmentTechnicalLanguage({ classify: true, unsegmentedTechnicalLanguage: { value: message } });
    expect(segmented.iterable.map((s) => [s.generic, s.specific])).toEqual([
      ['TEXT', undefined],
      ['CODE', 'ts'],
      ['TEXT', undefined],
      ['CODE', 'py'],
    ]);
    expect(segmented.iterable[1]!.fragment.string?.raw).toMatch(/^export function debounce/);
    expect(segmented.iterable[3]!.fragment.string?.raw).toBe('import os\nfrom pathlib import Path\n\ndef main():\n    print(Path.cwd())');
    const plain = await ml.segmentTechnicalLanguage({ unsegmentedTechnicalLanguage: { value: message } });
    expect(plain.iterable.map((s) => s.specific)).toEqual([undefined, undefined, undefined, undefined]);
    await refused(t, '/machine_learning/text/technical_language/parsers/segmentation', {}, 400, 'value');
    await refused(t, '/machine_learning/text/technical_language/parsers/segmentation?classify=maybe', { value: 'x' }, 400, 'classify');
  });

  it('personification gives the stored snippets of the languages asked for, those matching the personas first', async () => {
    const t = await setup();
    const { ml } = apis(t);
    const python = await ml.personificationTechnicalLanguageGeneration({ preonboardedPersonaDetails: { languages: ['python'] } });
    expect(python.seeds.iterable.map((seed) => seed.asset?.metadata?.name)).toEqual(['retry.py']);
    const all = await ml.personificationTechnicalLanguageGeneration({ preonboardedPersonaDetails: { personas: ['cache eviction'] } });
    expect(all.seeds.iterable[0]!.asset?.metadata?.name).toBe('lru.go');
    expect(all.seeds.iterable).toHaveLength(4);
    await refused(t, '/machine_learning/text/technical_language/generators/personification', { languages: ['klingon'] }, 400, 'klingon');
  });
});

describe('discovery', () => {
  it('finds the code in fragments and files, and stores it as discovered assets only when automatic', async () => {
    const t = await setup();
    const { discovery } = apis(t);
    const application = await connected(t);
    const seeded = {
      application,
      iterable: [
        { fragment: { string: { raw: 'Use this:\n\n```py\nprint("hi")\n```\n\nThat is all.' } } },
        { file: { string: { raw: 'package main\n\nfunc main() {}\n' }, metadata: { name: 'main.go' } } },
        { fragment: { string: { raw: 'Nothing but words here.' } } },
      ],
    };
    const before = (await t.assets.assetsSnapshot({})).iterable!.length;
    const found = await discovery.discoveryDiscoverAssets({ seededDiscoverableAssets: seeded as never });
    expect(found.application).toBe(application);
    expect(found.iterable.map((item) => [item.fragment?.string?.raw, item.fragment?.metadata?.ext])).toEqual([
      ['print("hi")', 'py'],
      ['package main\n\nfunc main() {}\n', 'go'],
    ]);
    expect((await t.assets.assetsSnapshot({})).iterable!.length).toBe(before);

    await discovery.discoveryDiscoverAssets({ automatic: true, seededDiscoverableAssets: seeded as never });
    const restarted = await setup({ databaseName: t.databaseName });
    const assets = (await restarted.assets.assetsSnapshot({})).iterable!;
    expect(assets.length).toBe(before + 2);
    const made = assets.filter((asset) => asset.discovered);
    expect(made.map((asset) => [asset.original.reference?.classification.specific, asset.mechanism]).sort()).toEqual([
      ['go', 'AUTOMATIC'],
      ['py', 'AUTOMATIC'],
    ]);
    expect(made.every((asset) => asset.creator === application)).toBe(true);

    await refused(t, '/discovery/discover/assets', { application, iterable: [{ directory: '/home/someone' }] }, 501, 'directory');
    await refused(t, '/discovery/discover/assets?automatic=true', { ...seeded, application: crypto.randomUUID() }, 404, 'No application');
    await refused(t, '/discovery/discover/assets', { application, iterable: [{}] }, 400, 'nothing to discover');
  });

  it('finds the code blocks of HTML pages; automatic stores them with the page as their website', async () => {
    const t = await setup();
    const { discovery } = apis(t);
    const application = await connected(t);
    const page =
      '<p>Install <code>npm</code>, then:</p><pre><code class="language-python">for i in range(3):\n    print(i &lt; 2)</code></pre>' +
      '<pre>SELECT name FROM users WHERE id = 1;</pre>';
    const url = 'https://docs.example.test/loops';
    const found = await discovery.discoveryDiscoverAssetsHtml({
      automatic: true,
      seededDiscoverableHtmlWebpages: { application, iterable: [{ url, page }] },
    });
    expect(found.iterable[0]!.url).toBe(url);
    expect(found.iterable[0]!.assets.iterable.map((item) => [item.fragment?.string?.raw, item.fragment?.metadata?.ext])).toEqual([
      ['for i in range(3):\n    print(i < 2)', 'py'],
      ['SELECT name FROM users WHERE id = 1;', 'sql'],
    ]);
    const made = (await t.assets.assetsSnapshot({})).iterable!.filter((asset) => asset.discovered);
    expect(made).toHaveLength(2);
    expect(made.map((asset) => asset.websites?.iterable.map((site) => site.url))).toEqual([[url], [url]]);
  });

  it('finds secrets in texts; automatic stores them as sensitives of the asset', async () => {
    const t = await setup();
    const { discovery } = apis(t);
    const asset = (await t.assets.assetsSnapshot({})).iterable![0]!.id;
    const text = 'const key = "AKIAIOSFODNN7EXAMPLE";\nconst gh = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";\nconst n = 1;';
    const seeded = { application: 'an-application', iterable: [{ asset, text }] };
    const found = await discovery.discoveryDiscoverSensitives({ seededDiscoverableSensitives: seeded });
    expect(found.iterable.map((item) => [item.seed.category, item.seed.text, item.seed.metadata?.match?.group.start])).toEqual([
      ['ACCESS_KEY', 'AKIAIOSFODNN7EXAMPLE', 13],
      ['ACCESS_TOKEN', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 48],
    ]);
    expect(await (await t.fetch(`${BASE}/sensitives`)).json()).toEqual({ iterable: [] });
    await discovery.discoveryDiscoverSensitives({ automatic: true, seededDiscoverableSensitives: seeded });
    const stored = (await (await t.fetch(`${BASE}/sensitives`)).json()) as { iterable: Array<{ text: string; asset: { id: string } }> };
    expect(stored.iterable.map((s) => [s.text, s.asset.id])).toEqual([
      ['AKIAIOSFODNN7EXAMPLE', asset],
      ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', asset],
    ]);
    await refused(
      t,
      '/discovery/discover/sensitives?automatic=true',
      { application: 'x', iterable: [{ asset: crypto.randomUUID(), text }] },
      404,
      'No asset',
    );
    await refused(t, '/discovery/discover/sensitives', { application: 'x', iterable: [{ asset }] }, 400, 'text');
  });

  it('relates tags by the assets they share; automatic puts the asset on them', async () => {
    const t = await setup();
    const { discovery } = apis(t);
    const make = async (raw: string, tags: string[]) =>
      (
        await t.assets.assetsCreateNewAsset({
          seed: {
            type: 'SEEDED_ASSET',
            asset: {
              application: (await t.applications.applicationsSnapshot()).iterable[0]!,
              format: fragment(raw),
              metadata: { tags: tags.map((text) => ({ text })) },
            },
          } as never,
        })
      ).id;
    await make('const a = useState(0);', ['react', 'hooks']);
    await make('const b = useEffect(f);', ['react', 'hooks', 'effects']);
    await make('<div />', ['react', 'jsx']);
    const mine = await make('export const App = () => null;', ['react', 'jsx']);
    const seeded = { application: 'x', iterable: [{ asset: mine, text: 'React' }] };
    const found = await discovery.discoveryDiscoverTagsRelated({ seededDiscoverableRelatedTags: seeded });
    expect(found.iterable.map((item) => item.seed.text)).toEqual(['hooks', 'effects']);
    expect((await t.asset.assetSnapshot({ asset: mine })).tags?.iterable).toHaveLength(2);
    await discovery.discoveryDiscoverTagsRelated({ automatic: true, seededDiscoverableRelatedTags: seeded });
    const tags = (await t.asset.assetSnapshot({ asset: mine })).tags!.iterable.map((tag) => tag.text).sort();
    expect(tags).toEqual(['effects', 'hooks', 'jsx', 'react']);
    await refused(
      t,
      '/discovery/discover/tags/related',
      { application: 'x', iterable: [{ asset: crypto.randomUUID(), text: 'react' }] },
      404,
      'No asset',
    );
  });
});

describe('tag-based search', () => {
  it('answers the assets on the tags, those on more of them first, as identifiers', async () => {
    const t = await setup();
    const { search } = apis(t);
    const application = (await t.applications.applicationsSnapshot()).iterable[0]!;
    const make = async (tags: string[]) =>
      (
        await t.assets.assetsCreateNewAsset({
          seed: {
            type: 'SEEDED_ASSET',
            asset: { application, format: fragment(tags.join(' ')), metadata: { tags: tags.map((text) => ({ text })) } },
          } as never,
        })
      ).id;
    const one = await make(['db']);
    const both = await make(['db', 'sql']);
    await make(['ui']);
    const found = await search.tagBasedSearch({ seededAssetTags: { iterable: [{ text: 'SQL' }, { text: 'db' }] } });
    expect(found.iterable.map((item) => item.identifier)).toEqual([both, one]);
    expect(found.iterable.every((item) => item.asset === undefined)).toBe(true);
    await refused(t, '/search/tag_based', { iterable: [] }, 400, 'no tag');
    await refused(t, '/search/tag_based', { iterable: [{ name: 'db' }] }, 400, 'name');
  });
});

describe("the copilot's helpers", () => {
  it('hints ask about the relevant records, not the question just asked', async () => {
    const t = await setup();
    const { qgpt } = apis(t);
    const asset = (await t.assets.assetsSnapshot({})).iterable!.find((a) => a.name === 'debounce.ts')!.id;
    const output = await qgpt.hints({
      qGPTHintsInput: {
        query: 'How could debounce.ts be improved?',
        relevant: { iterable: [{ id: asset, asset: { id: asset } }] } as never,
      },
    });
    const texts = output.answers.iterable.map((answer) => answer.text);
    expect(texts[0]).toMatch(/^What does `\w+` in debounce\.ts do\?$/);
    expect(texts[1]).toMatch(/^How do I use `\w+`\?$/);
    expect(texts).not.toContain('How could debounce.ts be improved?');
    expect(output.answers.iterable.every((answer) => answer.score === 1)).toBe(true);
    await refused(t, '/qgpt/hints', { query: 'x' }, 400, 'relevant');
  });

  const conversation = (...texts: string[]) => ({
    iterable: texts.map((text, i) => ({ text, role: i % 2 ? 'ASSISTANT' : 'USER', timestamp: { value: new Date(0) } })),
  });

  it('reprompt makes a follow-up standalone: deterministically without a model, through the model when one is set', async () => {
    const t = await setup();
    const { qgpt } = apis(t);
    const history = conversation('How do I retry a fetch in Python?', 'Use a loop with a backoff.');
    const follow = await qgpt.reprompt({ qGPTRepromptInput: { query: 'Can it give up after 3 tries?', conversation: history as never } });
    expect(follow.query).toBe('Can it give up after 3 tries? (in the context of the earlier question: How do I retry a fetch in Python?)');
    const alone = await qgpt.reprompt({ qGPTRepromptInput: { query: 'What is Rust?', conversation: history as never } });
    expect(alone.query).toBe('What is Rust?');

    const asked: unknown[] = [];
    const model: ModelAdapter = {
      description: 'a test model',
      async *answer(request) {
        asked.push(request);
        yield 'How can a Python fetch retry ';
        yield 'give up after 3 tries?';
      },
    };
    const withModel = await setup({ model });
    const rewritten = await apis(withModel).qgpt.reprompt({
      qGPTRepromptInput: { query: 'Can it give up after 3 tries?', conversation: history as never },
    });
    expect(rewritten.query).toBe('How can a Python fetch retry give up after 3 tries?');
    expect(asked).toHaveLength(1);
    expect((asked[0] as { messages: unknown[] }).messages).toEqual([
      { role: 'USER', text: 'How do I retry a fetch in Python?' },
      { role: 'ASSISTANT', text: 'Use a loop with a backoff.' },
    ]);
    await refused(
      t,
      '/qgpt/reprompt',
      { query: 'x', conversation: { iterable: [{ text: 'y', role: 'BOT', timestamp: { value: '2026-01-01T00:00:00.000Z' } }] } },
      400,
      'role',
    );
  });

  it('persons related are the stored persons whose records share words with the context', async () => {
    const t = await setup();
    const { qgpt } = apis(t);
    const retry = (await t.assets.assetsSnapshot({})).iterable!.find((a) => a.name === 'retry.py')!.id;
    const person = async (name: string, asset?: string) =>
      (await (await t.fetch(`${BASE}/persons/create`, jsonPost({ type: { basic: { name } }, ...(asset ? { asset } : {}) }))).json()) as {
        id: string;
      };
    const ada = await person('Ada Lovelace', retry);
    await person('Grace Hopper');
    const related = await qgpt.personsRelated({
      qGPTPersonsRelatedInput: { conversation: conversation('Who knows about retry with exponential backoff?') as never },
    });
    expect(related.persons.iterable.map((p) => p.id)).toEqual([ada.id]);
    expect(related.explanations?.[ada.id]).toContain('retry');
    const none = await qgpt.personsRelated({ qGPTPersonsRelatedInput: {} });
    expect(none.persons.iterable).toEqual([]);
  });
});

describe('workstream suggestions', () => {
  it('are worked out again from the store: the assets matching the query, else those updated last', async () => {
    const t = await setup();
    const { workstream } = apis(t);
    const application = (await t.applications.applicationsSnapshot()).iterable[0]!;
    const assets = (await t.assets.assetsSnapshot({})).iterable!;
    const lru = assets.find((a) => a.name === 'lru.go')!.id;
    const matching = await workstream.workstreamSuggestionsRefresh({
      seededWorkstreamSuggestionsRefresh: { application, query: 'least recently used cache' },
    });
    expect(matching.suggestions.iterable[0]!.asset?.id).toBe(lru);
    await t.asset.assetUpdate({ asset: { ...assets.find((a) => a.name === 'retry.py')!, name: 'retry-again.py' } });
    const latest = await workstream.workstreamSuggestionsRefresh({ seededWorkstreamSuggestionsRefresh: { application } });
    expect(latest.suggestions.iterable[0]!.asset?.id).toBe(assets.find((a) => a.name === 'retry.py')!.id);
    expect(latest.suggestions.iterable).toHaveLength(assets.length);
    await refused(t, '/workstream/suggestions/refresh', { query: 'x' }, 400, 'application');
  });
});

describe("the connector's extras", () => {
  it('onboarded is kept on the application, across a restart', async () => {
    const t = await setup();
    const { connector } = apis(t);
    const application = await connected(t);
    expect(await connector.onboarded({ application, body: false })).toContain('not onboarded');
    const restarted = await setup({ databaseName: t.databaseName });
    expect((await restarted.applications.applicationsSpecificApplicationSnapshot({ application })).onboarded).toBe(false);
    await refused(t, `/${application}/onboarded`, { onboarded: true }, 400, 'boolean');
    await refused(t, `/${crypto.randomUUID()}/onboarded`, true, 404, 'No application');
  });

  it('suggests reusing stored assets and saving new code; an intention makes text worth saving; a reaction saves or records the reuse', async () => {
    const t = await setup();
    const { connector } = apis(t);
    const application = await connected(t);
    const stored = (await t.assets.assetsSnapshot({})).iterable!.find((a) => a.name === 'debounce.ts')!;
    const copied = stored.original.reference!.fragment!.string!.raw!;
    const seed = (raw: string) => ({ asset: { format: fragment(raw) } });
    const again = await connector.suggest({ application, seededConnectorCreation: seed(copied) as never });
    expect([again.reuse.suggested, again.save.suggested, again.target.vector]).toEqual([true, false, 1]);
    expect(again.reuse.assets.iterable[0]!.id).toBe(stored.id);

    const note = 'Remember to rotate the staging keys every quarter';
    expect((await connector.suggest({ application, seededConnectorCreation: seed(note) as never })).save.suggested).toBe(false);
    await connector.intention({ application, seededConnectorAsset: seed(note).asset as never });
    expect((await connector.suggest({ application, seededConnectorCreation: seed(note) as never })).save.suggested).toBe(true);

    const before = (await t.assets.assetsSnapshot({})).iterable!.length;
    const saved = await connector.react({ application, reaction: { save: true, seed: seed(note) } as never });
    expect(saved).toMatch(/saved as asset /);
    const assets = (await t.assets.assetsSnapshot({})).iterable!;
    expect(assets).toHaveLength(before + 1);
    expect(assets.find((a) => a.original.reference?.fragment?.string?.raw === note)?.creator).toBe(application);

    await connector.react({ application, reaction: { save: false, reuse: { asset: stored.id }, seed: seed(copied) } as never });
    const activities = (await (await t.fetch(`${BASE}/activities`)).json()) as { iterable: Array<{ event: unknown }> };
    expect(JSON.stringify(activities.iterable.map((a) => a.event))).toContain('a_suggested_asset_was_referenced_by_the_user');
    await refused(t, `/${application}/reaction`, { save: true, seed: {} }, 400, 'asset');
  });

  it('track records interactions in the application engagement and asset events as activities', async () => {
    const t = await setup();
    const { connector } = apis(t);
    const application = await connected(t);
    const asset = (await t.assets.assetsSnapshot({})).iterable![0]!.id;
    const answer = await connector.track({
      application,
      seededConnectorTracking: {
        interaction: { description: 'opened the panel' },
        asset: { asset: { id: asset }, identifierDescriptionPair: { assetViewed: 'an_asset_was_viewed' } },
        ml: {},
      } as never,
    });
    expect(answer).toContain('interaction, asset');
    expect(answer).toContain('not kept here: ml');
    const restarted = await setup({ databaseName: t.databaseName });
    const engagement = (
      (await (await restarted.fetch(`${BASE}/applications/${application}`)).json()) as { engagement: { interactions: number } }
    ).engagement;
    expect(engagement.interactions).toBe(1);
    const activities = (await (await restarted.fetch(`${BASE}/activities`)).json()) as { iterable: Array<{ event: unknown }> };
    expect(JSON.stringify(activities.iterable.map((a) => a.event))).toContain('an_asset_was_viewed');
    await refused(
      t,
      `/${application}/track`,
      { asset: { asset: { id: crypto.randomUUID() }, identifier_description_pair: { asset_viewed: 'x' } } },
      404,
      'No asset',
    );
    await refused(t, `/${application}/track`, { clicks: {} }, 400, 'clicks');
  });
});

describe('asset sources', () => {
  it('macOS and UltraSuite assets are stored as assets', async () => {
    const t = await setup();
    const { macos, ultra } = apis(t);
    const fromMac = await macos.assetsCreateNewAssetFromMacos({ seededMacOSAsset: { value: 'echo "from a macOS Service"' } });
    expect(fromMac.original.reference?.classification.specific).toBe('sh');
    const fromUltra = await ultra.assetsCreateUltraSuiteAsset({
      seededUltraSuiteAsset: { name: 'notes.rb', ext: 'rb', description: 'A Ruby note', format: fragment('puts 1') as never },
    });
    expect([fromUltra.name, fromUltra.original.reference?.classification.specific]).toEqual(['notes.rb', 'rb']);
    expect(fromUltra.annotations?.iterable.map((a) => a.text)).toEqual(['A Ruby note']);
    const ids = (await t.assets.assetsSnapshot({})).iterable!.map((a) => a.id);
    expect(ids).toEqual(expect.arrayContaining([fromMac.id, fromUltra.id]));
    await refused(t, '/macos/assets/create', { text: 'x' }, 400, 'text');
    await refused(t, '/ultra_suite/assets/create', { ext: 'klingon', format: fragment('x') }, 400, 'ext');
  });
});

describe('local notifications', () => {
  it('are 501 where the host has no Notification API (Node), naming why', async () => {
    const t = await setup();
    await refused(t, '/notifications/local/send', { id: 1, title: 'Saved' }, 501, 'has no Notification API');
  });

  it('are shown through the Notification API where the host has one and the user allowed it; 403 where not', async () => {
    const shown: unknown[] = [];
    const FakeNotification = vi.fn(function (this: unknown, title: string, options: unknown) {
      shown.push([title, options]);
    }) as unknown as { permission: string };
    FakeNotification.permission = 'granted';
    vi.stubGlobal('Notification', FakeNotification);
    const t = await setup();
    const { notifications } = apis(t);
    expect(
      await notifications.sendLocalNotification({ notification: { id: 7, title: 'Saved', message: 'Your snippet was saved.' } }),
    ).toEqual({
      id: 7,
    });
    expect(shown).toEqual([['Saved', { body: 'Your snippet was saved.', tag: '7' }]]);
    FakeNotification.permission = 'denied';
    await refused(t, '/notifications/local/send', { id: 8 }, 403, 'requestPermission');
    await refused(t, '/notifications/local/send', { title: 'no id' }, 400, 'id');
    expect(shown).toHaveLength(1);
  });
});
