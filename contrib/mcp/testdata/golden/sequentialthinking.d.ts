declare const sequentialthinking: {
  /**
   * A detailed tool for dynamic and reflective problem-solving through thoughts.
   * This tool helps analyze problems through a flexible thinking process that can adapt and evolve.
   * Each thought can build on, question, or revise previous insights as understanding deepens.
   */
  sequentialthinking(args: {
    /** Your current thinking step */
    thought: string;
    /** Whether another thought step is needed */
    nextThoughtNeeded: boolean;
    /** Current thought number */
    thoughtNumber: number;
    /** Estimated total thoughts needed */
    totalThoughts: number;
    /** Branching point thought number */
    branchFromThought?: number;
    /** Branch identifier */
    branchId?: string;
    /** Whether this revises previous thinking */
    isRevision?: boolean;
    /** If more thoughts are needed */
    needsMoreThoughts?: boolean;
    /** Which thought is being reconsidered */
    revisesThought?: number;
  }): Promise<unknown>;
};
