/**
 * The client's local countdown for a claimed timed wait (behavior.md TW5, TW7).
 *
 * While the extension holds a claim the server's timer is stopped, so this
 * countdown is what ends the wait: it starts at the `remainingMs` of the
 * claim's one `$/progress` frame, ticks once a second for the title, and calls
 * `onExpired` at zero (the card then replies ASK_TIMED_OUT). "Take time"
 * pauses it for good: the user keeps the claim, and the card stays open until
 * they answer or dismiss it, or the server cancels.
 *
 * Time comes from an injected `Timers`, so tests advance a manual clock
 * instead of sleeping through deadlines.
 */
import { Disposable } from "vscode-jsonrpc";

export interface Timers {
  now(): number;
  /** Call `tick` every `everyMs` until the returned disposable is disposed. */
  every(everyMs: number, tick: () => void): Disposable;
}

export const realTimers: Timers = {
  now: () => Date.now(),
  every(everyMs, tick) {
    const handle = setInterval(tick, everyMs);
    return Disposable.create(() => clearInterval(handle));
  },
};

export type CountdownState = "idle" | "running" | "paused" | "expired" | "stopped";

const TICK_MS = 250;

export class Countdown {
  private deadline = 0;
  private ticker: Disposable | undefined;
  private _state: CountdownState = "idle";
  private lastShownSeconds: number | undefined;

  constructor(
    private readonly timers: Timers,
    private readonly onChange: () => void,
    private readonly onExpired: () => void,
  ) {}

  get state(): CountdownState {
    return this._state;
  }

  /** Milliseconds left (0 once expired); undefined before `start`. */
  get remainingMs(): number | undefined {
    if (this._state === "idle") return undefined;
    if (this._state === "expired") return 0;
    return Math.max(0, this.deadline - this.timers.now());
  }

  /** Whole seconds shown to the user, rounded up so "0s" means it is over. */
  get remainingSeconds(): number | undefined {
    const ms = this.remainingMs;
    return ms === undefined ? undefined : Math.ceil(ms / 1000);
  }

  /** Begin counting down from the claim's frame. A second frame is ignored (C3: exactly one). */
  start(remainingMs: number): void {
    if (this._state !== "idle") return;
    this.deadline = this.timers.now() + Math.max(0, remainingMs);
    this._state = "running";
    this.ticker = this.timers.every(TICK_MS, () => this.tick());
    this.onChange();
    this.tick();
  }

  /** "Take time": stop counting; the wait stays claimed (the server's timer stays stopped). */
  pause(): void {
    if (this._state !== "running") return;
    this._state = "paused";
    this.dispose();
    this.onChange();
  }

  /** The card ended some other way: no more ticks, no expiry. */
  stop(): void {
    if (this._state === "running" || this._state === "idle") this._state = "stopped";
    this.dispose();
  }

  dispose(): void {
    this.ticker?.dispose();
    this.ticker = undefined;
  }

  private tick(): void {
    if (this._state !== "running") return;
    const seconds = this.remainingSeconds ?? 0;
    if (this.deadline - this.timers.now() <= 0) {
      this._state = "expired";
      this.dispose();
      this.onChange();
      this.onExpired();
      return;
    }
    if (seconds !== this.lastShownSeconds) {
      this.lastShownSeconds = seconds;
      this.onChange();
    }
  }
}
