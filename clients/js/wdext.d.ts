// Types of wdext.mjs.

export interface MeasureOptions { source?: 'api' | 'engine'; timeout?: number }
export interface AllocationOptions {
  trackingAllocationSites?: boolean
  allocationSamplingProbability?: number
  maxAllocationsLogLength?: number
}

export interface WdextCommands {
  forceSample(): Promise<null>
  measureMemory(opts?: MeasureOptions): Promise<{ bytes: number; breakdown: any[] }>
  collectGarbage(opts?: { timeout?: number }): Promise<{ targets: any[] }>
  takeCensus(breakdown?: object, opts?: { targets?: 'page' | 'all' }): Promise<any>
  setAllocations(opts?: AllocationOptions): Promise<any>
  drainAllocations(): Promise<{ log: any[]; overflowed: boolean }>
  startGCLog(): Promise<{ collecting: boolean }>
  stopGCLog(): Promise<{ collecting: boolean }>
  gcLog(): Promise<{ collecting: boolean; entries: any[] }>
  startLiveObjects(): Promise<null>
  stopLiveObjects(): Promise<{ liveObjects: any[]; count: number; instanceSize: number }>
  leakStart(opts?: { targets?: 'page' }): Promise<null>
  leakStop(iterations: number): Promise<LeakReport>
  /** warmup runs, leakStart, iterations runs, leakStop; rejects with a LeakError when anything leaks. */
  checkLeaks(action: () => unknown, opts?: CheckLeaksOptions): Promise<LeakReport>
}

export interface CheckLeaksOptions { iterations?: number; warmup?: number }

export interface LeakFrame { functionName: string; url: string; line: number; column: number }
export interface Leak {
  kind: 'objects' | 'detached-dom' | 'collection' | 'event-listeners' | 'timers'
  name: string
  countDelta: number
  perIteration: number
  bytesDelta: number
  retainedBytes: number
  retainedPerIteration: number
  retainerPath: string[]
  createdFrom: LeakFrame | null
}
export interface LeakReport { iterations: number; bytesBefore: number; bytesAfter: number; leaks: Leak[] }

export declare const commands: Record<keyof WdextCommands, { method: string; path: string; params: (...args: any[]) => any }>
export declare function forSelenium(driver: any): WdextCommands
export declare function addWdioCommands<B>(browser: B): B & WdextCommands
export declare function checkLeaks(cmds: Pick<WdextCommands, 'leakStart' | 'leakStop'>, action: () => unknown, opts?: CheckLeaksOptions): Promise<LeakReport>
export declare function describeLeak(leak: Leak): string
export declare class LeakError extends Error {
  report: LeakReport
}
export declare class WdextError extends Error {
  status: number
  error: string
}

declare global {
  namespace WebdriverIO {
    interface Browser extends WdextCommands {}
  }
}
