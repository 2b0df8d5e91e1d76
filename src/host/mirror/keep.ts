/**
 * A write the upstream took, kept here too: from its answer when that is a record (a material of
 * the generic path too, by the graph table), read again from the upstream when the answer does
 * not show it, else made here as well.
 */
import type { Service } from '../../core/service.js';
import { storedJson } from '../../core/validate.js';
import type { SessionRecord } from '../../storage/schema.js';
import type { Storage } from '../../storage/storage.js';
import type { Follower, Synced } from './follower.js';
import { aboutOf, idAt } from './outbox-plan.js';
import {
  anchorConversationIds,
  anchorRecord,
  annotationRecord,
  applicationRecord,
  assetRecord,
  assetValuesListed,
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
    const kept = follower.kept.bind(follower);
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
        /** A record the write changed, read again from the upstream now (what is answered here next waits for it). */
        const reread = async (kind: Synced, id: string) => {
          await follower.refresh(kind, id, false);
          kept([id]);
        };
        const keepConversation = async (wire: unknown) => {
          const made = conversationRecord(wire);
          // Without its messages' references (transferables=false), it is read whole.
          if (made && conversationMessagesListed(wire)) {
            await write({ put: { conversations: [made] } });
            kept([made.conversation.id]);
          } else if (made) await reread('conversation', made.conversation.id);
        };
        switch (spec.answers) {
          case 'Conversation':
            return keepConversation(answer);
          case 'ConversationsCreateFromAssetOutput':
            return keepConversation(record(record(answer).conversation).reference);
          case 'ConversationMessage': {
            const message = record(answer);
            const owner = record(message.conversation).id;
            if (typeof message.id === 'string' && typeof owner === 'string') {
              await write({ put: { messages: [{ id: message.id, conversation: owner, json: storedJson(message) }] } });
              kept([owner]);
            }
            return;
          }
          case 'Application':
          case 'Context': {
            const application = applicationRecord(spec.answers === 'Context' ? record(answer).application : answer);
            if (application) {
              await write({ put: { applications: [application] } });
              kept([application.id]);
            }
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
            if (asset && assetValuesListed(answer)) {
              await write({ put: { assets: [asset] } });
              kept([asset.record.id]);
            } else if (asset) await reread('asset', asset.record.id);
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
            else if (annotation) await write({ put: { annotations: [annotation] } });
            return;
          }
          case 'Anchor': {
            const anchor = anchorRecord(answer);
            if (!anchor) return;
            await write({ put: { anchors: [anchor] } });
            kept([anchor.id]);
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
          if (material) {
            await write({ put: { materials: [material] } });
            kept([material.id]);
          }
          return;
        }
        const { request, text } = context;
        const here = () =>
          service.respond(new Request(request.url, { method: request.method, headers: request.headers, ...(text ? { body: text } : {}) }));
        if (spec.reads) {
          // Materials the answer does not show (both sides of an association): made here as well (kept
          // if the upstream goes away before it is read), then read again from the upstream.
          await here();
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
          const changes = await write({ remove: [{ kind: about.kind, id: about.id }] });
          for (const [kind, id] of owners) await reread(kind, id);
          // The records it was unlisted from here are read again after any read begun before the
          // delete (which would list it again when it lands).
          for (const change of changes) if (change.id !== about.id && !change.deleted) follower.readAgain(change.collection, change.id);
        } else if (about?.kind === 'asset') {
          // An asset changed without an answer that shows it (a tag or website put on or taken off): read it again.
          await reread('asset', about.id);
        } else {
          // No record in the answer (an association, a usage event): the write is made here as well.
          await here();
        }
      })
      .catch(() => {
        // The local copy catches up from the upstream's streams.
      });
  }
}
