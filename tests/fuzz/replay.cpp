// What a fuzz target is in a build without libFuzzer: a test that feeds it every file of the
// directories (or the files) it is given, the corpus kept beside the target, once each. A
// finding fixed stays fixed: its input goes into the corpus.
#include <QCoreApplication>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <cstdint>
#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size);

namespace {

bool replay(const QString &path, int &count)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "%s: cannot be read\n", qPrintable(path));
        return false;
    }
    const QByteArray input = file.readAll();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t *>(input.constData()), std::size_t(input.size()));
    ++count;
    return true;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    int count = 0;
    for (const QString &arg : app.arguments().mid(1)) {
        if (!QFileInfo(arg).isDir()) {
            if (!replay(arg, count))
                return 1;
            continue;
        }
        QDirIterator it(arg, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            if (!replay(it.next(), count))
                return 1;
    }
    if (count == 0) {
        std::fprintf(stderr, "no inputs: give the corpus directory\n");
        return 1;
    }
    std::printf("%d inputs replayed\n", count);
    return 0;
}
