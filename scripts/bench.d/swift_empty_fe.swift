// The empty program with FoundationEssentials linked in (keyhost links it): what it adds to a start.
import FoundationEssentials

if CommandLine.arguments.count > 99 { print(Data([1]).count) }
