/**
 * The stored material the copilot ranks (every asset and conversation message) in one relevance index,
 * built on first use and kept current as the store is written.
 * The assets' index is also kept in the database (`kept-index.ts`), so a restarted worker loads it and the changes since.
 */
import type { MessageRecord } from '../../storage/schema.js';
import type { Storage } from '../../storage/storage.js';
import { byScore, RelevanceIndex, type Hit } from '../relevance.js';
import { chunkRange, readKeptIndex, readKeptTexts, TEXT_CHUNK, writeKeptIndex, type KeptAssets } from './kept-index.js';
import { assetMaterial, materialFields, messageMaterial, type Material, type Ranked } from './material.js';

export { messageMaterial, type Material, type Ranked } from './material.js';

/** How long after its last change the assets' index is kept in the database. */
export const KEEP_INDEX_AFTER_MS = 2_000;
/** While changes keep coming, the index is kept at the latest this long after the first one not kept. */
const KEEP_INDEX_WITHIN_MS = 10_000;
/** Changed assets re-read one by one over a kept index, at most (or a quarter of it): beyond, every asset is read afresh. */
const REREAD_AT_MOST = 1_000;
/** Assets indexed between two turns of the event loop when the index is built. */
const BUILD_SLICE = 500;

/** The kept documents whose text was not read yet: where each is in the kept index, and the chunks read or being read. */
interface Unread {
  positions: Map<string, number>;
  kept: KeptAssets;
  chunks: Array<Promise<void> | undefined>;
}

export interface CorpusSearch {
  /** Rank assets; default true. */
  assets?: boolean;
  /** Rank conversation messages; default false. */
  messages?: boolean;
  /** Only these asset or message ids. */
  ids?: ReadonlySet<string>;
  limit?: number;
}

export class Corpus {
  readonly #storage: Storage;
  /** One index per kind, so that an asset's score depends on the assets alone. */
  readonly #indexes = { asset: new RelevanceIndex(), message: new RelevanceIndex() };
  readonly #materials = new Map<string, Material>();
  /**
   * The documents of the kept index whose text was not read yet (not in `#materials`): where each
   * is in the kept index, what it holds, and the chunks of texts read or being read.
   */
  #unread: Unread | null = null;
  /** How many chunks of texts the database holds (those beyond a new keep's are emptied). */
  #keptChunks = 0;
  #assets: Promise<void> | null = null;
  /** The last change the assets' index reflects (once every changed asset was read again). */
  #assetsSeq = 0;
  /** The last change announced of an asset (folded in once the changed assets are read again). */
  #announcedSeq = 0;
  #keepTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the first change not yet kept came. */
  #keepDue = 0;
  #keepRun: Promise<void> | null = null;
  /** The last change of the index kept in the database, as far as this corpus knows (-1: none kept). */
  #keptSeq = -1;
  /** Assets changed since they were last read. */
  readonly #dirtyAssets = new Set<string>();
  /** The re-read of changed assets under way: a search waits for it before looking at what is left. */
  #refreshing: Promise<void> | null = null;
  #messages: Promise<void> | null = null;
  /** Conversations changed since their messages were last read. */
  readonly #dirty = new Set<string>();
  readonly #byConversation = new Map<string, string[]>();
  /** Bumped when the whole store is replaced: loads begun before are dropped. */
  #generation = 0;
  /** The identity of the database the index was read from: another one (a wiped store) is read afresh. */
  #identity: string | undefined;

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  #add(material: Material) {
    // Newer than any kept text of it.
    if (material.kind === 'asset') this.#unread?.positions.delete(material.id);
    this.#materials.set(material.id, material);
    this.#indexes[material.kind].set({ id: material.id, kind: material.kind, fields: materialFields(material) });
  }

  #remove(id: string) {
    const material = this.#materials.get(id);
    if (material) {
      this.#materials.delete(id);
      this.#indexes[material.kind].delete(id);
    } else if (this.#unread?.positions.delete(id)) {
      this.#indexes.asset.delete(id);
    }
  }

  /** Reads the kept texts of these documents (those not read yet), so that their material is known. */
  async #readTexts(ids: Iterable<string>): Promise<void> {
    const unread = this.#unread;
    if (!unread) return;
    const wanted = new Set<number>();
    for (const id of ids) {
      const position = unread.positions.get(id);
      if (position !== undefined) wanted.add(Math.floor(position / TEXT_CHUNK));
    }
    await Promise.all([...wanted].map((chunk) => (unread.chunks[chunk] ??= this.#readChunk(unread, chunk))));
  }

  /**
   * One chunk of kept texts made material. A chunk missing or not of the index's stamp (a keep
   * cut short): its assets are read from the store instead, one by one (an asset gone leaves the index).
   */
  async #readChunk(unread: Unread, chunk: number): Promise<void> {
    const { kept, positions } = unread;
    const { from, count } = chunkRange(kept, chunk);
    try {
      const textAt = await readKeptTexts(this.#storage, kept, chunk);
      if (this.#unread !== unread) return;
      if (textAt) {
        for (let i = 0; i < count; i++) {
          const id = kept.index.ids[from + i]!;
          if (positions.get(id) !== from + i) continue;
          positions.delete(id);
          this.#materials.set(id, {
            id,
            kind: 'asset',
            name: kept.names[from + i]!,
            language: kept.languages[from + i]!,
            text: textAt(i),
            ...(kept.descriptions[from + i] ? { description: kept.descriptions[from + i]! } : {}),
          });
        }
        return;
      }
      const ids = kept.index.ids.slice(from, from + count).filter((id, i) => positions.get(id) === from + i);
      const assets = await Promise.all(ids.map((id) => this.#storage.getAsset(id)));
      if (this.#unread !== unread) return;
      ids.forEach((id, i) => {
        // Written or removed meanwhile: that is newer.
        if (!positions.has(id)) return;
        const asset = assets[i];
        if (asset) this.#add(assetMaterial(asset));
        else this.#remove(id);
      });
    } catch (error) {
      unread.chunks[chunk] = undefined;
      throw error;
    }
  }

  #loadAssets(): Promise<void> {
    const generation = this.#generation;
    this.#assets ??= this.#readAssets(generation).then(
      () => {},
      (error: unknown) => {
        this.#assets = null;
        throw error;
      },
    );
    return this.#assets;
  }

  #loadMessages(): Promise<void> {
    const generation = this.#generation;
    this.#messages ??= this.#storage.listConversations({ messages: true }).then(
      ({ conversations, messages }) => {
        if (generation !== this.#generation) return;
        for (const conversation of conversations) this.#setConversation(conversation.id, conversation.messageIds, messages!);
      },
      (error: unknown) => {
        this.#messages = null;
        throw error;
      },
    );
    return this.#messages;
  }

  #setConversation(id: string, messageIds: readonly string[], messages: Map<string, MessageRecord>) {
    for (const old of this.#byConversation.get(id) ?? []) this.#remove(old);
    const kept: string[] = [];
    for (const messageId of messageIds) {
      const record = messages.get(messageId);
      const material = record && messageMaterial(record);
      if (!material) continue;
      this.#add(material);
      kept.push(messageId);
    }
    if (kept.length) this.#byConversation.set(id, kept);
    else this.#byConversation.delete(id);
  }

  /** Re-reads the messages of the conversations changed since the last read. */
  async #refreshMessages() {
    await this.#loadMessages();
    if (this.#dirty.size === 0) return;
    const changed = [...this.#dirty];
    this.#dirty.clear();
    try {
      const states = await Promise.all(changed.map((id) => this.#storage.getConversation(id)));
      changed.forEach((id, i) => {
        const state = states[i];
        this.#setConversation(id, state?.record.messageIds ?? [], new Map(state?.messages.map((m) => [m.id, m])));
      });
    } catch (error) {
      for (const id of changed) this.#dirty.add(id);
      throw error;
    }
  }

  /**
   * The assets' index: the one kept in the database and the changes since, when the change log
   * still reaches back to it and it holds together; else every asset, read and indexed (and kept
   * a while later). Also read afresh when more assets changed since it was kept than it is worth
   * re-reading one by one.
   */
  async #readAssets(generation: number) {
    const kept = await readKeptIndex(this.#storage);
    if (kept) {
      const reading = this.#storage.changesSince(kept.seq, 'asset');
      const { index } = kept.kept;
      let loaded: RelevanceIndex | undefined;
      try {
        loaded = RelevanceIndex.load(index);
      } catch {
        // Damaged: built afresh below.
      }
      const since = await reading;
      const changed = new Set(since.changes.map((change) => change.id));
      if (loaded && since.complete && changed.size <= Math.max(REREAD_AT_MOST, index.ids.length / 4) && generation === this.#generation) {
        this.#indexes.asset = loaded;
        // The texts are read a chunk at a time, when first needed.
        this.#unread = { positions: new Map(index.ids.map((id, i) => [id, i])), kept: kept.kept, chunks: [] };
        this.#keptChunks = kept.kept.textChunks;
        for (const id of changed) this.#dirtyAssets.add(id);
        this.#assetsSeq = kept.seq;
        this.#keptSeq = kept.seq;
        this.#announcedSeq = Math.max(this.#announcedSeq, since.seq);
        return;
      }
    }
    const { seq } = await this.#storage.listIds('asset');
    const assets = await this.#storage.listAssets();
    // Indexed a slice at a time, so that other requests are answered meanwhile.
    for (let at = 0; at < assets.length; at += BUILD_SLICE) {
      if (at > 0) await new Promise((resolve) => setTimeout(resolve, 0));
      if (generation !== this.#generation) return;
      for (const asset of assets.slice(at, at + BUILD_SLICE)) this.#add(assetMaterial(asset));
    }
    if (generation !== this.#generation) return;
    this.#assetsSeq = seq;
    this.#keepLater();
  }

  /**
   * Keeps the assets' index in the database once no change came for a while (or at the latest
   * KEEP_INDEX_WITHIN_MS after the first change not kept, while changes keep coming).
   */
  #keepLater() {
    const now = Date.now();
    if (this.#keepTimer !== undefined && now - this.#keepDue > KEEP_INDEX_WITHIN_MS) return;
    if (this.#keepTimer === undefined) this.#keepDue = now;
    clearTimeout(this.#keepTimer);
    this.#keepTimer = setTimeout(() => {
      this.#keepTimer = undefined;
      void this.#keepOnce();
    }, KEEP_INDEX_AFTER_MS);
    // A timer of its own never holds a process (Node) open.
    (this.#keepTimer as { unref?: () => void }).unref?.();
  }

  /** One keep at a time: the one under way, or a new one. */
  #keepOnce(): Promise<void> {
    this.#keepRun ??= this.#keep().finally(() => (this.#keepRun = null));
    return this.#keepRun;
  }

  /**
   * Keeps the assets' index in the database: read (kept one and changes, or built) and brought up
   * to date first, so that a worker that wrote assets and never searched leaves an index too.
   */
  async #keep() {
    let failed = false;
    try {
      const generation = this.#generation;
      await this.#refreshAssets();
      if (this.#dirtyAssets.size || this.#assetsSeq === this.#keptSeq || generation !== this.#generation) return;
      // Every text is needed to keep them: those not read yet are read first.
      await this.#readTexts(this.#unread?.positions.keys() ?? []);
      if (this.#dirtyAssets.size || generation !== this.#generation) return;
      const seq = this.#assetsSeq;
      const index = this.#indexes.asset.save();
      const materials = index.ids.map((id) => this.#materials.get(id)!);
      this.#keptChunks = await writeKeptIndex(this.#storage, { seq, index, materials, keptChunks: this.#keptChunks });
      if (generation === this.#generation) this.#keptSeq = seq;
    } catch {
      // Kept for speed only: a failed write (storage full, the database gone) costs a rebuild on the next start.
      failed = true;
    } finally {
      // Changes that came while it was kept are kept in their turn.
      if (!failed && this.#assets && (this.#dirtyAssets.size || this.#assetsSeq !== this.#keptSeq)) this.#keepLater();
    }
  }

  /**
   * Re-reads the assets changed since the last read (an asset no longer stored leaves the index).
   * One re-read at a time: a search that comes while one is under way waits for it, then re-reads
   * what changed since, so that it never misses a write made before it began.
   */
  async #refreshAssets() {
    await this.#loadAssets();
    while (this.#refreshing !== null) await this.#refreshing.catch(() => {});
    if (this.#dirtyAssets.size === 0) return;
    const run = this.#rereadAssets();
    this.#refreshing = run;
    try {
      await run;
    } finally {
      if (this.#refreshing === run) this.#refreshing = null;
    }
  }

  async #rereadAssets() {
    const changed = [...this.#dirtyAssets];
    const upTo = this.#announcedSeq;
    this.#dirtyAssets.clear();
    try {
      const assets = await Promise.all(changed.map((id) => this.#storage.getAsset(id)));
      changed.forEach((id, i) => {
        const asset = assets[i];
        if (asset) this.#add(assetMaterial(asset));
        else this.#remove(id);
      });
      if (this.#dirtyAssets.size === 0) this.#assetsSeq = Math.max(this.#assetsSeq, upTo);
      this.#keepLater();
    } catch (error) {
      for (const id of changed) this.#dirtyAssets.add(id);
      throw error;
    }
  }

  /** An asset (or something on it) was written or deleted, by the change numbered `seq`. */
  assetChanged(id: string, seq = 0): void {
    this.#announcedSeq = Math.max(this.#announcedSeq, seq);
    // Changes made while the first load reads are re-read after it too: the load may predate them.
    if (this.#assets !== null) this.#dirtyAssets.add(id);
    // Kept up to date even where nothing searches (loading it first), for the next start.
    this.#keepLater();
  }

  /** A conversation or one of its messages was written or deleted. */
  conversationChanged(id: string): void {
    if (this.#messages !== null) this.#dirty.add(id);
  }

  async #sameDatabase() {
    const identity = await this.#storage.identity();
    if (this.#identity !== undefined && identity !== this.#identity) this.reset();
    this.#identity = identity;
  }

  /** The whole store was replaced (reset, seed, a wiped database): forget everything, read afresh on next use. */
  reset(): void {
    this.#generation++;
    this.#assets = null;
    this.#messages = null;
    this.#dirtyAssets.clear();
    clearTimeout(this.#keepTimer);
    this.#keepTimer = undefined;
    this.#assetsSeq = 0;
    this.#keptSeq = -1;
    this.#refreshing = null;
    this.#dirty.clear();
    this.#byConversation.clear();
    this.#materials.clear();
    this.#unread = null;
    this.#indexes.asset = new RelevanceIndex();
    this.#indexes.message = new RelevanceIndex();
  }

  /** Stored material by id (after a search loaded it). */
  get(id: string): Material | undefined {
    return this.#materials.get(id);
  }

  /** Ranks stored material against the query: best first, ties by id. */
  async search(query: string, options: CorpusSearch = {}): Promise<Ranked[]> {
    const hits = await this.hits(query, options);
    hits.sort(byScore);
    return this.material(hits.slice(0, options.limit));
  }

  /**
   * The hits of `search` without their material, in no particular order (at most `limit`, the
   * best): for combining several searches before making the material of the few kept.
   */
  async hits(query: string, options: CorpusSearch = {}): Promise<Hit[]> {
    const assets = options.assets ?? true;
    const messages = options.messages ?? false;
    await this.#sameDatabase();
    await Promise.all([assets ? this.#refreshAssets() : undefined, messages ? this.#refreshMessages() : undefined]);
    const search = { ids: options.ids, limit: options.limit, unordered: true };
    return [...(assets ? this.#indexes.asset.search(query, search) : []), ...(messages ? this.#indexes.message.search(query, search) : [])];
  }

  /** The material of hits (from `hits`), with their scores, in their order; a hit removed since is left out. */
  async material(hits: readonly Hit[]): Promise<Ranked[]> {
    await this.#readTexts(hits.map((hit) => hit.id));
    return hits.flatMap((hit) => {
      const material = this.#materials.get(hit.id);
      return material ? [{ ...material, score: hit.score }] : [];
    });
  }

  /** Loads the given kinds so that `get` finds them (every kept text read). */
  async load(options: { assets?: boolean; messages?: boolean }): Promise<void> {
    await this.#sameDatabase();
    await Promise.all([options.assets ? this.#refreshAssets() : undefined, options.messages ? this.#refreshMessages() : undefined]);
    if (options.assets) await this.#readTexts(this.#unread?.positions.keys() ?? []);
  }
}
