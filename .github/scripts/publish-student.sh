#!/usr/bin/env bash
# Publish one course release to the student repository:
#   1. on its branch, the files `python -m autograder publish` wrote into TREE (listed in
#      TREE/.autograder-publish.json) replace those of the last publish (listed in the branch's own
#      copy of that file), one commit, tagged TAG; every other file of the branch (the student
#      repository's own: a workflow, a syllabus) stays as it is;
#   2. its gh-pages branch becomes SITE (what `make site` wrote), a fresh commit each time
#      (the repository's Pages serve that branch: Settings > Pages > Deploy from a branch);
#   3. a GitHub release TAG there carries WHEEL, the student wheel. Every setup cell installs it from
#      https://github.com/OWNER/NAME/releases/download/v<version>/pytorch_course_helpers-<version>-py3-none-any.whl
#      (the address `python -m autograder configure` writes from [tool.course] student_repository
#      and [project] version: CourseSettings.wheel_url in autograder/course/settings.py), so TAG
#      must be v<version>: .github/scripts/check_release_tag.py checks it before this runs.
#      An existing release gets the new wheel in place of its old one.
#
# usage: publish-student.sh TREE SITE WHEEL
# environment:
#   TAG             the release tag, v<[project] version> (v1.2.0); required
#   COMMIT_MESSAGE  the branch's commit message (default "Course release $TAG")
#   STUDENT_REPO    OWNER/NAME of the student repository; required for the release
#   GH_TOKEN        a token with contents:write on it (secret STUDENT_REPO_TOKEN); used by git and gh
#   STUDENT_REMOTE  the remote to push to (default https://github.com/$STUDENT_REPO.git with the token)
#   STUDENT_BRANCH  its branch: [tool.course] branch (default main)
#   GH_BIN          the gh command line (default gh)
set -euo pipefail

if [ "$#" -ne 3 ]; then
    echo "usage: $0 TREE SITE WHEEL" >&2
    exit 2
fi
tree=$(cd "$1" && pwd)
site=$(cd "$2" && pwd)
wheel="$3"
: "${TAG:?set TAG to the release tag, e.g. v1.0.0}"
branch="${STUDENT_BRANCH:-main}"
gh_bin="${GH_BIN:-gh}"
if [ -z "${STUDENT_REMOTE:-}" ]; then
    : "${STUDENT_REPO:?set STUDENT_REPO to OWNER/NAME}"
    : "${GH_TOKEN:?set GH_TOKEN (the STUDENT_REPO_TOKEN secret)}"
    STUDENT_REMOTE="https://x-access-token:${GH_TOKEN}@github.com/${STUDENT_REPO}.git"
fi
for needed in "$tree/README.md" "$tree/.autograder-publish.json" "$site/index.html" "$wheel"; do
    if [ ! -f "$needed" ]; then
        echo "publish-student: $needed is missing; nothing was pushed" >&2
        exit 1
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-course-publisher}" GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-course-publisher@users.noreply.github.com}"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"

# 1. The branch: the files of this publish replace those of the last one, on top of the branch's
# history; a file that neither publish wrote is the student repository's own and stays.
repo="$work/repo.git"
git init --quiet --bare "$repo"
previous="$work/previous.json"
echo '{"files": []}' > "$previous"
if git --git-dir="$repo" fetch --quiet --depth 1 "$STUDENT_REMOTE" "refs/heads/$branch" 2>/dev/null; then
    git --git-dir="$repo" update-ref HEAD FETCH_HEAD
    git --git-dir="$repo" read-tree HEAD
    git --git-dir="$repo" show HEAD:.autograder-publish.json > "$previous" 2>/dev/null \
        || echo '{"files": []}' > "$previous"
fi
listed() {  # the files a publish record lists, one a line (NUL-free paths, as publish writes)
    python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["files"]))' "$1"
}
listed "$tree/.autograder-publish.json" > "$work/now.txt"
echo ".autograder-publish.json" >> "$work/now.txt"
listed "$previous" | grep -vxF -f "$work/now.txt" > "$work/gone.txt" || true
while IFS= read -r gone; do
    [ -n "$gone" ] && git --literal-pathspecs --git-dir="$repo" rm --quiet --cached --ignore-unmatch -- "$gone"
done < "$work/gone.txt"
git --literal-pathspecs --git-dir="$repo" --work-tree="$tree" add --pathspec-from-file="$work/now.txt"
if git --git-dir="$repo" rev-parse --quiet --verify HEAD >/dev/null \
        && git --git-dir="$repo" --work-tree="$tree" diff --cached --quiet; then
    echo "publish-student: $branch already holds this tree"
else
    git --git-dir="$repo" --work-tree="$tree" commit --quiet -m "${COMMIT_MESSAGE:-Course release $TAG}"
fi
git --git-dir="$repo" tag --force "$TAG"
git --git-dir="$repo" push --quiet "$STUDENT_REMOTE" "HEAD:refs/heads/$branch"
git --git-dir="$repo" push --quiet --force "$STUDENT_REMOTE" "refs/tags/$TAG"

# 2. gh-pages: the website, one commit without history (Pages serve the latest only).
git init --quiet --initial-branch=gh-pages "$work/pages"
cp -R "$site/." "$work/pages/"
touch "$work/pages/.nojekyll"  # served as is: no Jekyll pass over the HTML
git -C "$work/pages" add --all .
git -C "$work/pages" commit --quiet -m "Website for $TAG"
git -C "$work/pages" push --quiet --force "$STUDENT_REMOTE" HEAD:refs/heads/gh-pages

# 3. The release with the student wheel (its asset replaced when the release exists already).
if ! "$gh_bin" release create "$TAG" "$wheel" --repo "${STUDENT_REPO:-}" --title "Course $TAG" \
        --notes "The course's notebooks as of $TAG. Every notebook's setup cell installs the attached wheel."; then
    "$gh_bin" release upload "$TAG" "$wheel" --clobber --repo "${STUDENT_REPO:-}"
fi
echo "publish-student: $TAG pushed to $branch and gh-pages; release $TAG holds $(basename "$wheel")"
