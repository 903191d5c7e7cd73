declare const edgecases: {
  /** definitions (draft 4-7) and a tuple in items */
  draft4_definitions(args?: {
    range?: [string?, number?];
    user?: {
      login: string;
      admin?: boolean;
    };
  }): Promise<{
    ok: boolean;
    items?: (string | number)[];
  }>;

  /** A tool whose input schema has no properties at all. */
  no_schema(args?: { [key: string]: unknown }): Promise<unknown>;

  /** oneOf of objects distinguished by a const tag, a nullable field and a tuple. */
  union_shapes(args: {
    shape: {
      kind: "circle";
      radius: number;
    } | {
      kind: "rect";
      w: number;
      h: number;
    };
    anyof_required?: {
      a?: string;
      b?: string;
    };
    anything?: unknown;
    badref?: unknown;
    /**
     * A description with *\/ inside and
     * several lines
     */
    "comment */ end"?: string;
    constobj?: unknown;
    "content-type"?: "text/plain" | "application/json";
    level?: 1 | 2 | 3 | null;
    meta?: { [key: string]: number };
    mixed?: {
      id?: string;
      [key: string]: unknown;
    };
    note?: string | null;
    nothing?: never;
    point?: [number, number];
    ref_siblings?: {
      name: string;
    } & {
      age?: number;
    };
    tags?: string | string[];
    tree?: {
      value: string;
      children?: unknown[];
    };
  }): Promise<unknown>;
};
