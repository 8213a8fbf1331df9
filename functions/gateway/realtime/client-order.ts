import type { ClientMessage } from '../../store/realtime-channel';

// API Gateway runs `$default` invocations side by side, so the channel holds a session's messages in the
// order those invocations finished. Each carries its number from the connection's counter; this puts them
// back in the client's order before the relay sends them upstream.

export interface ClientOrderOptions {
  /** How long a missing number is waited for before the messages after it go on without it. */
  gapWaitMs: number;
  /** At most this many messages wait behind a gap; one more and the gap is given up at once. */
  maxHeld: number;
  /** A gap given up: messages `from`..`to` had not arrived in time. */
  onSkip(from: number, to: number): void;
  /** A message that arrived after its gap was given up; it is sent on, out of order. */
  onLate(seq: number): void;
  now?: () => number;
}

export class ClientOrder {
  private next = 1;
  private readonly held = new Map<number, ClientMessage>();
  private gapSince?: number;
  private readonly now: () => number;

  constructor(private readonly options: ClientOrderOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Takes messages as the channel hands them out; returns those now due, in the client's order. */
  accept(messages: ClientMessage[]): ClientMessage[] {
    const ready: ClientMessage[] = [];
    for (const message of messages) {
      const { seq } = message;
      if (seq === undefined) {
        // Unnumbered (its counter failed): it goes in channel order rather than not at all.
        ready.push(message);
      } else if (seq < this.next) {
        // Its gap was given up already: late, but never dropped.
        this.options.onLate(seq);
        ready.push(message);
      } else {
        this.held.set(seq, message);
      }
    }
    this.drain(ready);
    if (this.held.size > this.options.maxHeld) this.skipGap(ready);
    return ready;
  }

  /** How long to wait for the missing message before `expire`; undefined when nothing waits. */
  waitMs(): number | undefined {
    if (this.gapSince === undefined) return undefined;
    return Math.max(0, this.gapSince + this.options.gapWaitMs - this.now());
  }

  /** Gives up a gap that has waited its time; returns the messages that were held behind it. */
  expire(): ClientMessage[] {
    const ready: ClientMessage[] = [];
    if (this.waitMs() === 0) this.skipGap(ready);
    return ready;
  }

  private drain(ready: ClientMessage[]): void {
    const from = this.next;
    for (let message = this.held.get(this.next); message; message = this.held.get(this.next)) {
      this.held.delete(this.next);
      this.next++;
      ready.push(message);
    }
    // A gap's wait starts when it opens: the first message held behind it, or the gap before it filled.
    if (this.held.size === 0) this.gapSince = undefined;
    else if (this.gapSince === undefined || this.next !== from) this.gapSince = this.now();
  }

  private skipGap(ready: ClientMessage[]): void {
    const first = Math.min(...this.held.keys());
    this.options.onSkip(this.next, first - 1);
    this.next = first;
    this.gapSince = undefined;
    this.drain(ready);
  }
}
