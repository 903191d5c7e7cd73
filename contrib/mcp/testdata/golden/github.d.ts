declare const github: {
  /**
   * Open new issue
   *
   * Create a new issue in a GitHub repository.
   */
  create_issue(args: {
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
    /** Issue title */
    title: string;
    /** Usernames to assign to this issue */
    assignees?: string[];
    /** Issue body content */
    body?: string;
    /** Labels to apply to this issue */
    labels?: string[];
    /** Milestone number */
    milestone?: number;
  }): Promise<unknown>;

  /** Create a new pull request in a GitHub repository. */
  create_pull_request(args: {
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
    /** PR title */
    title: string;
    /** Branch containing changes */
    head: string;
    /** Branch to merge into */
    base: string;
    /** PR description */
    body?: string;
    /** Create as draft PR */
    draft?: boolean;
    /** Allow maintainer edits */
    maintainer_can_modify?: boolean;
  }): Promise<unknown>;

  /** Get the contents of a file or directory from a GitHub repository */
  get_file_contents(args: {
    /** Repository owner (username or organization) */
    owner: string;
    /** Repository name */
    repo: string;
    /**
     * Path to file/directory (directories must end with a slash '/')
     * @default "/"
     */
    path?: string;
    /** Accepts optional git refs such as `refs/tags/{tag}`, `refs/heads/{branch}` or `refs/pull/{pr_number}/head` */
    ref?: string;
    /** Accepts optional commit SHA. If specified, it will be used instead of ref */
    sha?: string;
  }): Promise<unknown>;

  /** Get details of a specific issue in a GitHub repository. */
  get_issue(args: {
    /** The owner of the repository */
    owner: string;
    /** The name of the repository */
    repo: string;
    /** The number of the issue */
    issue_number: number;
  }): Promise<unknown>;

  /** List issues in a GitHub repository. For pagination, use the 'endCursor' from the previous response's 'pageInfo' in the 'after' parameter. */
  list_issues(args: {
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
    /** Cursor for pagination. Use the cursor from the previous page. */
    after?: string;
    /** Order direction. If provided, the 'orderBy' also needs to be provided. */
    direction?: "ASC" | "DESC";
    /** Filter by labels */
    labels?: string[];
    /** Order issues by field. If provided, the 'direction' also needs to be provided. */
    orderBy?: "CREATED_AT" | "UPDATED_AT" | "COMMENTS";
    /** Results per page for pagination (min 1, max 100) */
    perPage?: number;
    /** Filter by date (ISO 8601 timestamp) */
    since?: string;
    /** Filter by state, by default both open and closed issues are returned when not provided */
    state?: "OPEN" | "CLOSED";
  }): Promise<unknown>;

  /** Push multiple files to a GitHub repository in a single commit */
  push_files(args: {
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
    /** Branch to push to */
    branch: string;
    /** Array of file objects to push, each object with path (string) and content (string) */
    files: {
      /** path to the file */
      path: string;
      /** file content */
      content: string;
    }[];
    /** Commit message */
    message: string;
  }): Promise<unknown>;

  /** Find GitHub repositories by name, description, readme, topics, or other metadata. Perfect for discovering projects, finding examples, or locating specific repositories across GitHub. */
  search_repositories(args: {
    /** Repository search query. Examples: 'machine learning in:name stars:>1000 language:python', 'topic:react', 'user:facebook'. Supports advanced search syntax for precise filtering. */
    query: string;
    /**
     * Return minimal repository information (default: true). When false, returns full GitHub API repository objects.
     * @default true
     */
    minimal_output?: boolean;
    /** Sort order */
    order?: "asc" | "desc";
    /** Page number for pagination (min 1) */
    page?: number;
    /** Results per page for pagination (min 1, max 100) */
    perPage?: number;
    /** Sort repositories by field, defaults to best match */
    sort?: "stars" | "forks" | "help-wanted-issues" | "updated";
  }): Promise<unknown>;

  /** Update an existing pull request in a GitHub repository. */
  update_pull_request(args: {
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
    /** Pull request number to update */
    pullNumber: number;
    /** New base branch name */
    base?: string;
    /** New description */
    body?: string;
    /** Mark pull request as draft (true) or ready for review (false) */
    draft?: boolean;
    /** Allow maintainer edits */
    maintainer_can_modify?: boolean;
    /** GitHub usernames to request reviews from */
    reviewers?: string[];
    /** New state */
    state?: "open" | "closed";
    /** New title */
    title?: string;
  }): Promise<unknown>;
};
