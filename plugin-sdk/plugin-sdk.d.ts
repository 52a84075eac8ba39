// Types of the Fundament plugin SDK v1 (postMessage protocol 1), served at /plugins/sdk/v1/plugin-sdk.js.
// The script sets the global `window.fundament`; see README.md.

export type Theme = 'light' | 'dark';
export type View = 'list' | 'detail' | 'create';
export type AuthFailedReason = 'mint_failed' | 'unauthorized' | 'revoked';

/** The `fundament:init` payload without `type`, `protocolVersion`, `token` and `tokenExpiresAt`. */
export interface InitContext {
  readonly theme: Theme;
  /** The installed plugin's name (the PluginInstallation's metadata.name). */
  readonly pluginName: string;
  /** The CRD kind being rendered, e.g. `Certificate`. */
  readonly crdKind: string;
  readonly view: View;
  /** Detail views: the object shown. */
  readonly resource?: { readonly name: string; readonly namespace?: string };
  /** Create views in a project: the project's namespaces. */
  readonly namespaces?: readonly string[];
  /** Base URL of kube-api-proxy. */
  readonly kubeApiProxyUrl: string;
  readonly clusterId: string;
}

/** Host → plugin messages (flat objects `{type, ...fields}`). */
export type HostMessage =
  | ({ type: 'fundament:init'; protocolVersion: 1; token?: string; /** unix seconds */ tokenExpiresAt?: number } & InitContext)
  | { type: 'fundament:theme-changed'; theme: Theme }
  | { type: 'fundament:token-refreshed'; token: string; /** unix seconds */ tokenExpiresAt: number }
  | { type: 'fundament:auth-failed'; reason: AuthFailedReason };

/** Plugin → host messages. */
export type PluginMessage =
  | { type: 'plugin:ready'; protocolVersion: 1 }
  | { type: 'plugin:resize'; height: number }
  | { type: 'plugin:request-token-refresh' }
  | { type: 'plugin:navigate'; name: string; namespace?: string }
  | { type: 'plugin:create' }
  | { type: 'plugin:navigate-back' };

/**
 * Why a call failed:
 * - `timeout`: no response within 30 s (the request was aborted), or no token / no `fundament:init` within 20 s;
 * - `unauthorized`: 401 again after one token refresh (`status` 401), or the console could not mint a token
 *   (`fundament:auth-failed`; `reason` holds its reason);
 * - `forbidden`: 403;
 * - `http`: any other non-2xx answer (`message` is the Kubernetes Status message, `status` its code);
 * - `transport`: network failure (connection refused, CORS, DNS, aborted stream);
 * - `gone`: watch only, the resourceVersion expired (410); the SDK lists again and resumes.
 */
export type SdkErrorCode = 'timeout' | 'unauthorized' | 'forbidden' | 'http' | 'transport' | 'gone';

export interface KubernetesStatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { reason?: string; message?: string; field?: string }[];
  [key: string]: unknown;
}

export declare class SdkError extends Error {
  constructor(code: SdkErrorCode, message: string, status?: number, extra?: object);
  readonly name: 'SdkError';
  readonly code: SdkErrorCode;
  /** HTTP status (the Status `code`) for `unauthorized`, `forbidden`, `http` and `gone`. */
  readonly status?: number;
  /** Status `reason` (e.g. `AlreadyExists`, `Invalid`) or, after `fundament:auth-failed`, its reason. */
  readonly reason?: string;
  /** Status `details`, e.g. the field causes of an `Invalid` answer. */
  readonly details?: KubernetesStatusDetails;
}

/** A collection: core resources have no group (`/api/<version>`), others `/apis/<group>/<version>`. */
export interface ResourceRef {
  /** API group; empty or omitted for core (`v1`) resources. */
  group?: string;
  version: string;
  /** Plural resource name, e.g. `certificates`. */
  resource: string;
  /** Omit for cluster-scoped resources or to list across all namespaces. */
  namespace?: string;
}
export interface ObjectRef extends ResourceRef {
  name: string;
}
export interface ListRef extends ResourceRef {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  /** The `metadata.continue` token of the previous page. */
  continue?: string;
}
export interface WatchRef extends ResourceRef {
  /** Watch a single object (sent as fieldSelector `metadata.name=<name>`). */
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  [key: string]: unknown;
}
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}
export interface ListResult<T> {
  items: T[];
  /** The list's metadata: `resourceVersion` (to start a watch) and `continue` (next page). */
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: T;
}
export interface WatchOptions<T> {
  /** Start after this version (e.g. a list's `metadata.resourceVersion`). Without it the SDK lists first and
   *  reports every current object as `ADDED`. */
  resourceVersion?: string;
  onEvent?: (event: WatchEvent<T>) => void;
  /** Every failure. `gone`: drop your cache, `ADDED` events of a fresh list follow. The watch stops after
   *  `unauthorized`, `forbidden` and 4xx `http` errors; on others it reconnects with backoff. */
  onError?: (error: SdkError) => void;
}
export interface WatchHandle {
  stop(): void;
}

export interface FundamentSdk {
  /** Resolves with the first accepted `fundament:init`. Never rejects. */
  readonly init: Promise<InitContext>;
  /** The console's origin, pinned by the first `fundament:init`; `null` before. */
  readonly parentOrigin: string | null;
  /** The current PluginToken; waits up to 20 s for one (asking the console if none is held). */
  getToken(): Promise<string>;
  /** `fetch` with `Authorization: Bearer <token>`, a 30 s timeout and one refresh-and-retry on 401.
   *  Resolves with any HTTP status; rejects with SdkError `timeout`, `transport` or a token failure. */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
  k8s: {
    list<T = KubeObject>(ref: ListRef): Promise<ListResult<T>>;
    get<T = KubeObject>(ref: ObjectRef): Promise<T>;
    create<T = KubeObject>(ref: ResourceRef, body: unknown): Promise<T>;
    /** JSON merge patch (`Content-Type: application/merge-patch+json`). */
    patch<T = KubeObject>(ref: ObjectRef, body: unknown): Promise<T>;
    delete<T = KubeObject>(ref: ObjectRef): Promise<T>;
    watch<T = KubeObject>(ref: WatchRef, options?: WatchOptions<T>): WatchHandle;
  };
  /** Called on every `fundament:theme-changed`; returns an unsubscribe function. */
  onThemeChange(cb: (theme: Theme) => void): () => void;
  /** Posts `plugin:navigate` to the console (after init, to its pinned origin only): opens that object's detail view. */
  navigate(name: string, namespace?: string): void;
  /** Posts `plugin:create`: opens the create view (from a list view). */
  create(): void;
  /** Posts `plugin:navigate-back`: back to the list (from a detail or create view). */
  back(): void;
  readonly SdkError: typeof SdkError;
}

/** Test-only: read once when the script loads. Never set this in a plugin. */
export interface FundamentSdkTestTimings {
  tokenWaitMs?: number;
  requestTimeoutMs?: number;
  resizeDebounceMs?: number;
  watchRetryMs?: number;
}

declare global {
  interface Window {
    fundament: FundamentSdk;
    __FUNDAMENT_SDK_TEST_TIMINGS__?: FundamentSdkTestTimings;
  }
  var fundament: FundamentSdk; // eslint-disable-line no-var
}
