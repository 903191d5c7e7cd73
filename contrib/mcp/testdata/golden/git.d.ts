declare const git: {
  /** List Git branches */
  git_branch(args: {
    /** The path to the Git repository. */
    repo_path: string;
    /** Whether to list local branches ('local'), remote branches ('remote') or all branches('all'). */
    branch_type: string;
    /**
     * The commit sha that branch should contain. Do not pass anything to this param if no commit sha is specified
     * @default null
     */
    contains?: string | null;
    /**
     * The commit sha that branch should NOT contain. Do not pass anything to this param if no commit sha is specified
     * @default null
     */
    not_contains?: string | null;
  }): Promise<unknown>;

  /** Records changes to the repository */
  git_commit(args: {
    /** Repo Path */
    repo_path: string;
    /** Message */
    message: string;
  }): Promise<unknown>;

  /** Shows changes in the working directory that are not yet staged */
  git_diff_unstaged(args: {
    /** Repo Path */
    repo_path: string;
    /**
     * Context Lines
     * @default 3
     */
    context_lines?: number;
  }): Promise<unknown>;

  /** Shows the commit logs */
  git_log(args: {
    /** Repo Path */
    repo_path: string;
    /**
     * End timestamp for filtering commits. Accepts: ISO 8601 format (e.g., '2024-01-15T14:30:25'), relative dates (e.g., '2 weeks ago', 'yesterday'), or absolute dates (e.g., '2024-01-15', 'Jan 15 2024')
     * @default null
     */
    end_timestamp?: string | null;
    /**
     * Max Count
     * @default 10
     */
    max_count?: number;
    /**
     * Start timestamp for filtering commits. Accepts: ISO 8601 format (e.g., '2024-01-15T14:30:25'), relative dates (e.g., '2 weeks ago', 'yesterday'), or absolute dates (e.g., '2024-01-15', 'Jan 15 2024')
     * @default null
     */
    start_timestamp?: string | null;
  }): Promise<unknown>;

  /** Shows the working tree status */
  git_status(args: {
    /** Repo Path */
    repo_path: string;
  }): Promise<unknown>;
};
