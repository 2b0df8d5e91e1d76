/**
 * A write the upstream took, kept here too: from its answer when that is a record (a material of
 * the generic path too, by the graph table), read again from the upstream when the answer does
 * not show it, else made here as well.
 */
import type { Service } from '../../core/service.js';
import { storedJson } from '../../core/validate.js';
import type { SessionRecord } from '../../storage/schema.js';
import type { Change, Storage } from '../../storage/storage.js';
import type { Follower, Synced } from './follower.js';
import { aboutOf, idAt, touches } from './outbox-plan.js';
import {
  anchorConversationIds,
  anchorRecord,
  annotationRecord,
  applicationRecord,
  assetRecord,
  assetValuesListed,
  idsIn,
  conversationMessagesListed,
  conversationRecord,
  materialRecord,
} from './records.js';
import type { Rewritten } from './rewrite-request.js';
import { mirrorOf } from './writes.js';
import type { Write } from './write.js';

const record = (value: unknown) => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {});

export class Keeper {
  #keeping: Promise<void> = Promise.resolve();

  constructor(
    private readonly service: Service,
    private readonly storage: Pick<Storage, 'getAnnotation' | 'getAnchor'>,
    private readonly write: Write,
    private readonly follower: Follower,
  ) {}

  /** What is being kept: an answer given here waits for it. */
  get keeping(): Promise<void> {
    return this.#keeping;
  }

  /**
   * Keeps the write `context` the upstream answered with `response` (in order, after the answer
   * went out). The local copy then has it even if the upstream goes away next, and the streams'
   * own news of it changes nothing more.
   */
  keep(context: Rewritten, response: Response) {
    const spec = context.found && mirrorOf(context.found.operation.name);
    if (!spec || spec.local || !response.ok) return;
    const copy = response.clone();
    const { service, storage, write, follower } = this;
    const mark = follower.keeping();
    this.#keeping = this.#keeping
      .then(async () => {
        let answer: unknown;
        try {
          const body = await copy.text();
          answer = body ? JSON.parse(body) : undefined;
        } catch {
          answer = undefined;
        }
        const about = aboutOf(context.entry);
        /**
         * A write here: the records it is about (and those they list; `gone`: it removes them)
         * noted before it is made, and with every record it changed after, so that no read of them
         * from the upstream begun before lands over it.
         */
        const local = async (ids: Array<string | undefined>, make: () => Promise<Change[] | Response> | undefined, gone = false) => {
          follower.touched(ids, gone);
          const made = await make();
          follower.touched(ids, gone);
          const changes = Array.isArray(made) ? made : [];
          for (const change of changes) follower.touched([change.id], change.deleted === true);
          // A read of them that landed since the answer came may hold more than it: read them again.
          if (!gone) follower.landedSince(mark, [...ids, ...changes.map((change) => change.id)]);
        };
        /**
         * A record the write changed, read again from the upstream now (what is answered here next
         * waits for it); a read of it begun before the write is discarded when it lands.
         */
        const reread = (kind: Synced, id: string) => {
          follower.touched([id]);
          return follower.refresh(kind, id, false);
        };
        const keepConversation = async (wire: unknown) => {
          const made = conversationRecord(wire);
          // Without its messages' references (transferables=false), it is read whole.
          if (made && conversationMessagesListed(wire)) await local(idsIn(wire), () => write({ put: { conversations: [made] } }));
          else if (made) await reread('conversation', made.conversation.id);
        };
        switch (spec.answers) {
          case 'Conversation':
            return keepConversation(answer);
          case 'ConversationsCreateFromAssetOutput':
            return keepConversation(record(record(answer).conversation).reference);
          case 'ConversationMessage': {
            const message = record(answer);
            const { id } = message;
            const owner = record(message.conversation).id;
            if (typeof id === 'string' && typeof owner === 'string')
              await local([owner, ...idsIn(message)], () =>
                write({ put: { messages: [{ id, conversation: owner, json: storedJson(message) }] } }),
              );
            return;
          }
          case 'Application':
          case 'Context': {
            const wire = spec.answers === 'Context' ? record(answer).application : answer;
            const application = applicationRecord(wire);
            if (application) await local(idsIn(wire), () => write({ put: { applications: [application] } }));
            return;
          }
          case 'Session': {
            // The upstream's session, as its API shapes it.
            const session = record(answer) as { id?: unknown; opened?: SessionRecord['opened']; closed?: SessionRecord['closed'] };
            if (typeof session.id !== 'string' || !session.opened) return;
            const application = context.entry.application;
            await write({
              put: {
                sessions: [
                  {
                    id: session.id,
                    opened: session.opened,
                    ...(session.closed ? { closed: session.closed } : {}),
                    ...(application ? { application } : {}),
                  },
                ],
              },
            });
            return;
          }
          case 'Asset': {
            const asset = assetRecord(answer);
            // Without its formats' values (transferables=false), it is read whole.
            if (asset && assetValuesListed(answer)) await local(idsIn(answer), () => write({ put: { assets: [asset] } }));
            else if (asset) await reread('asset', asset.record.id);
            return;
          }
          case 'Format': {
            // The format's asset changed with it: read whole.
            const asset = typeof record(answer).asset === 'string' ? record(answer).asset : record(record(answer).asset).id;
            if (typeof asset === 'string') await reread('asset', asset);
            return;
          }
          case 'Annotation': {
            const annotation = annotationRecord(answer);
            if (annotation?.asset) await reread('asset', annotation.asset.id);
            else if (annotation) await local(idsIn(answer), () => write({ put: { annotations: [annotation] } }));
            return;
          }
          case 'Anchor': {
            const anchor = anchorRecord(answer);
            if (!anchor) return;
            await local(idsIn(answer), () => write({ put: { anchors: [anchor] } }));
            // The conversation (the asset) it was made for lists it now.
            const { conversation, asset } = record(context.entry.body);
            if (typeof conversation === 'string') await reread('conversation', conversation);
            if (typeof asset === 'string') await reread('asset', asset);
            return;
          }
        }
        if (typeof spec.answers === 'object') {
          // A material of the generic path: its answer is the kind's model, kept under the upstream's id.
          const material = materialRecord(spec.answers.material, answer);
          if (material) await local(idsIn(answer), () => write({ put: { materials: [material] } }));
          return;
        }
        const { request, text } = context;
        const here = () =>
          service.respond(new Request(request.url, { method: request.method, headers: request.headers, ...(text ? { body: text } : {}) }));
        if (spec.reads) {
          // Materials the answer does not show (both sides of an association): made here as well (kept
          // if the upstream goes away before it is read), then read again from the upstream.
          await local([...touches(context.entry)], here);
          for (const { kind, at } of spec.reads) {
            const id = idAt(context.entry, at);
            if (id) await reread(kind, id);
          }
          return;
        }
        if (spec.deletes && about) {
          // What changed with it is read again: an annotation's asset, the conversations that listed an anchor.
          const owners: Array<[Synced, string]> =
            about.kind === 'annotation'
              ? [(await storage.getAnnotation(about.id))?.asset?.id].filter((id): id is string => !!id).map((id) => ['asset', id])
              : about.kind === 'anchor'
                ? anchorConversationIds(await storage.getAnchor(about.id)).map((id) => ['conversation', id])
                : [];
          await local([about.id], () => write({ remove: [{ kind: about.kind, id: about.id }] }), true);
          for (const [kind, id] of owners) await reread(kind, id);
        } else if (about?.kind === 'asset') {
          // An asset changed without an answer that shows it (a tag or website put on or taken off): read it again.
          await reread('asset', about.id);
        } else {
          // No record in the answer (an association, a usage event): the write is made here as well.
          await local([...touches(context.entry)], here);
        }
      })
      .catch(() => {
        // The local copy catches up from the upstream's streams.
      })
      .finally(() => follower.kept(mark));
  }
}
