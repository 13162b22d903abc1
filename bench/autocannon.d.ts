/** The part of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
  }
  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
    requests?: AutocannonRequest[];
  }
  interface Percentiles {
    average: number;
    p50: number;
    p99: number;
    max: number;
  }
  interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Percentiles;
    requests: Percentiles & { total: number; sent: number };
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>;
  export default autocannon;
}
