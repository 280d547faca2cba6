import Foundation
import PackagePlugin

/// Writes BuildInfo.swift before each build: the git commit keyhost is built from and the versions pkg-config
/// reports for the C libraries that have no version function of their own (libsecp256k1). `--version` prints them.
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("BuildInfo.swift")
        let root = context.package.directoryURL.path
        // Quoted for the shell; "unknown" when git or pkg-config cannot tell (a source tarball).
        let script = """
            commit=$(git -C '\(root)' rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            dirty=$(git -C '\(root)' status --porcelain --untracked-files=no 2>/dev/null | head -c1)
            [ -n "$dirty" ] && commit="$commit-modified"
            secp=$(pkg-config --modversion libsecp256k1 2>/dev/null || echo unknown)
            tmp='\(output.path).tmp'
            printf 'enum BuildInfo {\\n    static let commit = "%s"\\n    static let secp256k1 = "%s"\\n}\\n' "$commit" "$secp" > "$tmp"
            cmp -s "$tmp" '\(output.path)' 2>/dev/null && rm -f "$tmp" || mv "$tmp" '\(output.path)'
            """
        return [.prebuildCommand(displayName: "Recording the commit and library versions", executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: ["-c", script], outputFilesDirectory: context.pluginWorkDirectoryURL)]
    }
}
