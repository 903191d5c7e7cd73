declare const context7: {
  /**
   * Get Library Docs
   *
   * Fetches up-to-date documentation for a library. You must call 'resolve-library-id' first to obtain the exact Context7-compatible library ID required to use this tool.
   */
  "get-library-docs"(args: {
    /** Exact Context7-compatible library ID (e.g., '/mongodb/docs', '/vercel/next.js') retrieved from 'resolve-library-id'. */
    context7CompatibleLibraryID: string;
    /** Maximum number of tokens of documentation to retrieve (default: 5000). */
    tokens?: number;
    /** Topic to focus documentation on (e.g., 'hooks', 'routing'). */
    topic?: string;
  }): Promise<unknown>;

  /**
   * Resolve Context7 Library ID
   *
   * Resolves a package/product name to a Context7-compatible library ID and returns a list of matching libraries.
   */
  "resolve-library-id"(args: {
    /** Library name to search for and retrieve a Context7-compatible library ID. */
    libraryName: string;
  }): Promise<unknown>;
};
